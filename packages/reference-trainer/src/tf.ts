// Gradient functions are registered by the @tensorflow/tfjs union package: tfjs-core alone
// registers none, and its per-op ESM gradient files do not load under Node's ESM resolver.
import '@tensorflow/tfjs';
import * as tf from '@tensorflow/tfjs-core';

export { tf };
