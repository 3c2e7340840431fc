import { tf } from './tf.js';

/**
 * Identity in the forward pass, zero gradient in the backward pass (tfjs has no
 * built-in stopGradient). Token weights and old log-probs go through it so they
 * stay constants even if a caller derived them from the parameters.
 */
export const stopGradient: (x: tf.Tensor) => tf.Tensor = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
  const x = args[0] as tf.Tensor;
  return { value: tf.clone(x), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) };
}) as (x: tf.Tensor) => tf.Tensor;
