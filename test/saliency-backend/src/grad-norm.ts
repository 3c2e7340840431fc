import '@rlvr/policy'; // registers the gradients tfjs-core alone lacks (as @rlvr/saliency does)
import * as tf from '@tensorflow/tfjs-core';
import { totalTokens, type RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { defineBackend, modelBackendOptions, packRows, planMicroBatches, type SaliencyResult } from '@rlvr/saliency';
import { z } from 'zod';

/** The signal this backend produces. */
export const GRAD_NORM_SIGNAL = 'example.gradNorm';

/** Options: the shared ones of every model backend (answer span, alignment, budget...) plus the norm's order. */
export const GradNormConfigSchema = z.strictObject({
  ...modelBackendOptions,
  /** 1 or 2: the norm of the gradient over the hidden size */
  order: z.union([z.literal(1), z.literal(2)]).default(2),
});
export type GradNormConfig = z.output<typeof GradNormConfigSchema>;

/**
 * Plain-gradient saliency: s_t = || dL_ans/de_t ||_p, without GRAIL's product with the embedding.
 * L_ans = -sum of the answer tokens' log-probs, as GRAIL's; one forward + one backward w.r.t. the
 * input embeddings per micro-batch, through the policy's input-only mode.
 */
function gradNorm(model: Qwen3Model, batch: RolloutBatch, cfg: GradNormConfig): SaliencyResult {
  const B = batch.numRollouts;
  const D = model.dims.D;
  const out: SaliencyResult = {
    signal: GRAD_NORM_SIGNAL,
    scores: new Float32Array(totalTokens(batch)),
    hasScores: new Uint8Array(B),
    missing: B,
  };
  for (const rows of planMicroBatches(batch, cfg.tokenBudget)) {
    const p = packRows(batch, rows, cfg.answerSpan, cfg.padId);
    const { n, P, C, S } = p;
    if (!p.hasAnswer.some((a) => a === 1)) continue;
    const off = cfg.alignment === 'own' ? P : P - 1;
    const scores = tf.tidy(() => {
      const ids = tf.tensor2d(p.ids, [n, S], 'int32');
      const mask = tf.tensor2d(p.attentionMask, [n, S]);
      const targets = tf.slice(ids, [0, P], [n, C]) as tf.Tensor2D;
      const answer = tf.tensor2d(p.answerMask, [n, C]);
      const loss = (e: tf.Tensor) => {
        const h = tf.slice(
          model.hidden({ embeds: e as tf.Tensor3D, attentionMask: mask, weightGrad: false }),
          [0, P - 1, 0],
          [n, C, D],
        ) as tf.Tensor3D;
        const { logprobs } = model.tokenLogprobs(h, targets, { temperature: cfg.temperature, weightGrad: false });
        return tf.neg(tf.sum(tf.mul(logprobs, answer))) as tf.Scalar;
      };
      const g = tf.slice(tf.grad(loss)(model.embed(ids)), [0, off, 0], [n, C, D]);
      return (cfg.order === 1 ? tf.sum(tf.abs(g), 2) : tf.sqrt(tf.sum(tf.square(g), 2))).dataSync() as Float32Array;
    });
    p.rollouts.forEach((i, r) => {
      if (!p.hasAnswer[r]) return;
      const c0 = batch.completionOffsets[i]!;
      const cl = batch.completionOffsets[i + 1]! - c0;
      out.scores.set(scores.subarray(r * C, r * C + cl), c0);
      out.hasScores[i] = 1;
      out.missing--;
    });
  }
  return out;
}

/** The backend: register it with `saliencyBackends.register(gradNormBackend)`. */
export const gradNormBackend = defineBackend({
  name: 'grad-norm',
  signal: GRAD_NORM_SIGNAL,
  configSchema: GradNormConfigSchema,
  run: gradNorm,
});
