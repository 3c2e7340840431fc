import * as tf from '@tensorflow/tfjs-core';
import { packRollouts, planMicroBatches, scatterPacked, totalTokens } from '@rlvr/core';
import type { PackedRollouts, RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from './model.js';

/**
 * Log-probs and entropies of a micro-batch's completion tokens under `model`, at `temperature`
 * (default 1). Differentiable (the trainer's loss runs through it). The hidden state at column
 * P - 1 + t predicts completion token t, so prompts must hold at least one token.
 * @returns logp, entropy `[b, C]` (padding columns hold junk: mask them)
 */
export function microBatchLogprobs(
  model: Qwen3Model,
  mb: PackedRollouts,
  options: { temperature?: number } = {},
): { logp: tf.Tensor2D; entropy: tf.Tensor2D } {
  const { n: b, P, C, S } = mb;
  return tf.tidy(() => {
    const ids = tf.tensor2d(mb.ids, [b, S], 'int32');
    const mask = tf.tensor2d(mb.attentionMask, [b, S]);
    const h = model.hidden({ ids, attentionMask: mask });
    const D = h.shape[2];
    const hs = tf.slice(h, [0, P - 1, 0], [b, C, D]) as tf.Tensor3D;
    const targets = tf.slice(ids, [0, P], [b, C]) as tf.Tensor2D;
    const { logprobs, entropy } = model.tokenLogprobs(
      hs,
      targets,
      options.temperature === undefined ? {} : { temperature: options.temperature },
    );
    return { logp: logprobs, entropy };
  });
}

/** Options of `batchLogprobs`. */
export interface BatchLogprobsOptions {
  /** Most padded tokens (rows x (prompt + completion)) per forward pass. */
  tokenBudget: number;
  /** Token id of padding columns (never attended to). Default 0. */
  padId?: number;
  /** `include[i]` false skips rollout i (its tokens stay 0). */
  include?: ArrayLike<boolean>;
  /** Divide the logits by this before the softmax. Default 1. */
  temperature?: number;
}

/**
 * Log-probs and entropies of every completion token of `batch` under `model`, forward only,
 * micro-batched under `tokenBudget` padded tokens. The old log-probs of a step, a reference
 * model's log-probs, the `policy.entropy` signal.
 * @returns logprobs, entropy `[totalTokens]`
 */
export async function batchLogprobs(
  model: Qwen3Model,
  batch: RolloutBatch,
  options: BatchLogprobsOptions,
): Promise<{ logprobs: Float32Array; entropy: Float32Array }> {
  const T = totalTokens(batch);
  const logprobs = new Float32Array(T);
  const entropy = new Float32Array(T);
  for (const rows of planMicroBatches(batch, options.tokenBudget, options.include)) {
    const packed = packRollouts(batch, rows, options.padId ?? 0);
    const { logp, entropy: h } = microBatchLogprobs(model, packed, options);
    try {
      // Asynchronous reads: the webgpu backend has no synchronous read in Node.
      scatterPacked(batch, packed, await logp.data(), logprobs);
      scatterPacked(batch, packed, await h.data(), entropy);
    } finally {
      tf.dispose([logp, h]);
    }
  }
  return { logprobs, entropy };
}
