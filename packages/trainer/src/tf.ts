// tfjs-core registers kernels' gradients only on request; training needs them all.
import '@tensorflow/tfjs-core/dist/register_all_gradients.js';
import * as tf from '@tensorflow/tfjs-core';

export { tf };
