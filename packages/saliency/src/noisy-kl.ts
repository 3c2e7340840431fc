import { Rng, SIGNAL_NAMES, totalTokens, type RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { z } from 'zod';
import { tf } from './tf.js';
import { defineBackend } from './backend.js';
import { modelBackendOptions, parseBackendConfig } from './config.js';
import { SaliencyError } from './errors.js';
import { checkBatch, packRows, planMicroBatches, scatterRows, scoreOffset, type PackedRows } from './layout.js';
import { answerLogProbs, klFromLogProbs } from './answer-distribution.js';
import { countMissing, type SaliencyResult } from './result.js';

/**
 * `noisy-kl` (OAR-G): score_t = | sum_d g_{t,d} e~_{t,d} | with g the gradient of
 * KL(p0 || p_noisy) w.r.t. the noisy embeddings e~. The reference code does not divide its logits
 * by the temperature (moot at 1).
 */
export const NoisyKlConfigSchema = z.strictObject({
  ...modelBackendOptions,
  /** Standard deviation of the Gaussian noise added to the scored embeddings. */
  noiseStd: z.number().nonnegative().default(1e-3),
  /** Seed of the noise: the same seed gives the same noise whatever the micro-batching. */
  seed: z.number().int().default(0),
  /**
   * A fixed noise tensor `[totalTokens * D]` (already scaled; `noiseStd` and `seed` are then
   * unused): row t is added to the embedding that scores completion token t. For tests and
   * cross-framework checks.
   */
  noise: z.custom<Float32Array>((v) => v instanceof Float32Array, 'must be a Float32Array').optional(),
});
export type NoisyKlConfig = z.output<typeof NoisyKlConfigSchema>;
export type NoisyKlConfigInput = z.input<typeof NoisyKlConfigSchema>;

/**
 * OAR-G on one packed micro-batch (as the GRAIL repository's `compute_oar_g_weights`):
 * 1. clean forward (no gradient) -> p0 = softmax of the mean answer-position logits `[n, V]`;
 * 2. noisy embeddings e~ = e + noise on the scored positions only (columns `scoreOffset + j` of
 *    real completion tokens; with `previous` alignment that is the last prompt token and every
 *    completion token but the last, as in the reference);
 * 3. loss = sum over rows with an answer of KL(p0 || p_noisy); gradient w.r.t. e~ only;
 * 4. score `[n, C]` = | sum_d g_d e~_d | at the scored positions.
 *
 * @param noise `[n, C, D]` the noise of each row's scored slots (0 on padding slots)
 * @returns scores `[n, C]` (null when no row has an answer) and the per-row KL `[n]`
 */
export function noisyKlRows(model: Qwen3Model, packed: PackedRows, cfg: NoisyKlConfig, noise: Float32Array): { scores: Float32Array | null; kl: Float32Array } {
  const { n, P, C, S } = packed;
  const D = model.dims.D;
  if (!packed.hasAnswer.some((a) => a === 1)) return { scores: null, kl: new Float32Array(n) };
  let kept: tf.Tensor[] = [];
  let result: { scores: Float32Array | null; kl: Float32Array } | undefined;
  try {
    tf.tidy(() => {
      const ids = tf.tensor2d(packed.ids, [n, S], 'int32');
      const mask = tf.tensor2d(packed.attentionMask, [n, S]);
      const answerMask = tf.tensor2d(packed.answerMask, [n, C]);
      const has = tf.tensor1d(Float32Array.from(packed.hasAnswer));
      const embeds = model.embed(ids);
      const answerOf = (e: tf.Tensor3D) => {
        const h = model.hidden({ embeds: e, attentionMask: mask, weightGrad: false }); // input-only backward
        return answerLogProbs(model, tf.slice(h, [0, P - 1, 0], [n, C, D]) as tf.Tensor3D, answerMask, cfg.temperature);
      };
      const logP0 = answerOf(embeds); // a constant: outside the differentiated function
      const off = scoreOffset(packed, cfg.alignment);
      const parts: tf.Tensor3D[] = [];
      if (off > 0) parts.push(tf.zeros([n, off, D]));
      parts.push(tf.tensor3d(noise, [n, C, D]));
      if (off + C < S) parts.push(tf.zeros([n, S - off - C, D]));
      const noisy = tf.add(embeds, tf.concat(parts, 1)) as tf.Tensor3D;
      const loss = (e: tf.Tensor3D): tf.Scalar => {
        const kl = klFromLogProbs(logP0, answerOf(e));
        kept = [tf.keep(kl)];
        return tf.sum(tf.mul(kl, has)) as tf.Scalar;
      };
      const g = tf.grad((x) => loss(x as tf.Tensor3D))(noisy);
      const ge = tf.mul(tf.slice(g, [0, off, 0], [n, C, D]), tf.slice(noisy, [0, off, 0], [n, C, D]));
      const scores = tf.abs(tf.sum(ge, 2)).dataSync() as Float32Array;
      const kl = Float32Array.from(kept[0]!.dataSync() as Float32Array, (v, r) => (packed.hasAnswer[r] ? v : 0));
      result = { scores, kl };
    });
  } finally {
    tf.dispose(kept);
  }
  return result!;
}

/**
 * The noise of the scored slots of `packed`'s rows `[n, C, D]`: from `cfg.noise` (`[totalTokens * D]`)
 * or drawn from a Gaussian seeded per rollout (`seed/rollout`), so that the same seed gives the
 * same noise whatever the micro-batching.
 */
export function noiseRows(batch: RolloutBatch, packed: PackedRows, cfg: NoisyKlConfig, D: number): Float32Array {
  const out = new Float32Array(packed.n * packed.C * D);
  packed.rollouts.forEach((i, r) => {
    if (!packed.hasAnswer[r]) return;
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    const dst = r * packed.C * D;
    if (cfg.noise) {
      out.set(cfg.noise.subarray(c0 * D, (c0 + cl) * D), dst);
      return;
    }
    const rng = new Rng(`${cfg.seed}/${i}`);
    for (let k = 0; k < cl * D; k++) out[dst + k] = cfg.noiseStd * rng.normal();
  });
  return out;
}

/**
 * OAR-G raw scores (`saliency.noisyKl`) of a whole batch, micro-batched under `tokenBudget`.
 * Two forward passes and one input-only backward per micro-batch. Rollouts without an answer
 * span get no scores (flagged in `hasScores`, values 0).
 */
export function noisyKl(model: Qwen3Model, batch: RolloutBatch, config: NoisyKlConfigInput = {}): SaliencyResult {
  return oarG(model, batch, parseBackendConfig(NoisyKlConfigSchema, config, 'noisy-kl'));
}

function oarG(model: Qwen3Model, batch: RolloutBatch, cfg: NoisyKlConfig): SaliencyResult {
  checkBatch(batch, model.dims.V);
  const T = totalTokens(batch);
  const B = batch.numRollouts;
  const D = model.dims.D;
  if (cfg.noise && cfg.noise.length !== T * D) {
    throw new SaliencyError('invalid_config', `noise has ${cfg.noise.length} values, expected totalTokens x hidden size = ${T} x ${D} = ${T * D}`, { field: 'noise' });
  }
  const out: SaliencyResult = { signal: SIGNAL_NAMES.noisyKl, scores: new Float32Array(T), hasScores: new Uint8Array(B), missing: B, loss: new Float32Array(B) };
  for (const rows of planMicroBatches(batch, cfg.tokenBudget)) {
    const packed = packRows(batch, rows, cfg.answerSpan, cfg.padId);
    const r = noisyKlRows(model, packed, cfg, noiseRows(batch, packed, cfg, D));
    if (r.scores) {
      for (let k = 0; k < packed.n; k++) if (!packed.hasAnswer[k]) r.scores.fill(0, k * packed.C, (k + 1) * packed.C);
      scatterRows(batch, packed, r.scores, out.scores);
    }
    packed.rollouts.forEach((i, k) => {
      out.hasScores[i] = packed.hasAnswer[k]!;
      out.loss![i] = r.kl[k]!;
    });
  }
  return countMissing(out);
}

/** OAR-G's backend. */
export const noisyKlBackend = defineBackend({ name: 'noisy-kl', signal: SIGNAL_NAMES.noisyKl, configSchema: NoisyKlConfigSchema, run: oarG });
