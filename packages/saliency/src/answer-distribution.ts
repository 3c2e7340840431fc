import type { Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';

/**
 * The answer distribution of OAR-G and the perturbation backend: the log-softmax of the mean of
 * the logits at the positions that predict the answer tokens.
 *
 * Since the LM head is linear, mean_t(h_t W^T) = (mean_t h_t) W^T: the mean is taken over the
 * hidden states `[n, A, D]` first, so only `[n, V]` logits are ever built (never `[n, T, V]`).
 *
 * @param hidden     `[n, C, D]` hidden states at columns P - 1 .. P + C - 2 (they predict completion tokens 0 .. C - 1)
 * @param answerMask `[n, C]` 1 on the answer tokens
 * @returns          `[n, V]` log-probabilities (rows without answer tokens: the distribution of a zero hidden state)
 */
export function answerLogProbs(model: Qwen3Model, hidden: tf.Tensor3D, answerMask: tf.Tensor2D, temperature: number): tf.Tensor2D {
  return tf.tidy(() => {
    const count = tf.maximum(tf.sum(answerMask, 1, true), 1); // [n, 1]
    const mean = tf.div(tf.sum(tf.mul(hidden, tf.expandDims(answerMask, 2)), 1), count) as tf.Tensor2D; // [n, D]
    // The policy's LM head: a plain product (no transposed operand, slow on wasm) whose gradient
    // reaches the hidden states only (no `[V, D]` weight gradient).
    const n = mean.shape[0];
    let z: tf.Tensor = tf.reshape(model.project(tf.reshape(mean, [n, 1, model.dims.D]) as tf.Tensor3D, { weightGrad: false }), [
      n,
      model.dims.V,
    ]); // [n, V]
    if (temperature !== 1) z = tf.div(z, temperature);
    return tf.logSoftmax(z, 1) as tf.Tensor2D;
  });
}

/**
 * KL(p0 || p) per row `[n]` = sum_v p0 (log(p0 + 1e-12) - log p), with the reference code's 1e-12
 * inside the first log. `logP0`, `logP` `[n, V]`.
 */
export function klFromLogProbs(logP0: tf.Tensor2D, logP: tf.Tensor2D): tf.Tensor1D {
  return tf.tidy(() => {
    const p0 = tf.exp(logP0);
    return tf.sum(tf.mul(p0, tf.sub(tf.log(tf.add(p0, 1e-12)), logP)), 1) as tf.Tensor1D;
  });
}
