// Loading @rlvr/policy registers tfjs-core's gradient functions (the Node build of tfjs-core alone
// registers none); tfjs-core's engine is global, so this copy and the policy's share one.
import '@rlvr/policy';
import * as tf from '@tensorflow/tfjs-core';

export { tf };
