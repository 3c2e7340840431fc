// Loading @rlvr/policy registers tfjs-core's gradient functions (its vendor/tf-gradients.js): the Node
// build of tfjs-core alone registers none.
import '@rlvr/policy';
import * as tf from '@tensorflow/tfjs-core';

export { tf };
