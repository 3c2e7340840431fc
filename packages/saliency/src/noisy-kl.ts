import { Rng, SIGNAL_NAMES, totalTokens, type RolloutBatch } from '@rlvr/core';
import type { KVCache, Qwen3Model } from '@rlvr/policy';
import { z } from 'zod';
import { tf } from './tf.js';
import { defineBackend } from './backend.js';
import { modelBackendOptions, parseBackendConfig } from './config.js';
import { SaliencyError } from './errors.js';
import { checkBatch, packRows, planMicroBatches, scatterRows, scoreOffset, type PackedRows } from './layout.js';
import { answerLogProbs, klFromLogProbs } from './answer-distribution.js';
import { countMissing, type FusedResult } from './result.js';

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

/** Host arrays of one micro-batch of OAR-G (`[n, C]` unless said). */
interface NoisyKlRows {
  /** null when no row has an answer (the noisy pass and the backward are skipped) */
  scores: Float32Array | null;
  /** `[n]` KL(p0 || p_noisy) per row (0 without an answer) */
  kl: Float32Array;
  /** log-probs and entropies of every completion token, from the clean forward pass */
  logprobs: Float32Array;
  entropy: Float32Array;
}

/**
 * OAR-G on one packed micro-batch (as the GRAIL repository's `compute_oar_g_weights`):
 * 1. clean forward (no gradient) -> p0 = softmax of the mean answer-position logits `[n, V]`, and
 *    from the same hidden states the log-probs and entropies of every completion token (the old
 *    log-probs: a trainer then needs no forward pass of its own);
 * 2. noisy embeddings e~ = e + noise on the scored positions only (columns `scoreOffset + j` of
 *    real completion tokens; with `previous` alignment that is the last prompt token and every
 *    completion token but the last, as in the reference);
 * 3. loss = sum over rows with an answer of KL(p0 || p_noisy); gradient w.r.t. e~ only;
 *    the prompt columns before P - 1 carry no noise, so both passes share one no-gradient
 *    prefix (`model.prefix`) and the backward covers the columns from P - 1 on;
 * 4. score `[n, C]` = | sum_d g_d e~_d | at the scored positions.
 *
 * @param noise `[n, C, D]` the noise of each row's scored slots (0 on padding slots)
 */
async function noisyKlRows(model: Qwen3Model, packed: PackedRows, cfg: NoisyKlConfig, noise: Float32Array): Promise<NoisyKlRows> {
  const { n, P, C, S } = packed;
  const D = model.dims.D;
  const Q = P - 1; // the prompt columns before Q carry no noise: one no-gradient prefix for both passes
  const W = S - Q;
  const anyAnswer = packed.hasAnswer.some((a) => a === 1);
  let kept: tf.Tensor[] = [];
  // log-probs, entropies `[n, C]` and (with an answer) scores `[n, C]`, kept past the tidy and read asynchronously after it
  let out: tf.Tensor[] = [];
  let past: KVCache | undefined;
  try {
    tf.tidy(() => {
      const ids = tf.tensor2d(packed.ids, [n, S], 'int32');
      const mask = tf.tensor2d(packed.attentionMask, [n, S]);
      const answerMask = tf.tensor2d(packed.answerMask, [n, C]);
      const has = tf.tensor1d(Float32Array.from(packed.hasAnswer));
      if (Q > 0)
        past = model.prefix(tf.slice(ids, [0, 0], [n, Q]) as tf.Tensor2D, tf.slice(mask, [0, 0], [n, Q]) as tf.Tensor2D, { width: S });
      const suffixMask = Q > 0 ? (tf.slice(mask, [0, Q], [n, W]) as tf.Tensor2D) : mask;
      const embeds = model.embed(Q > 0 ? (tf.slice(ids, [0, Q], [n, W]) as tf.Tensor2D) : ids); // columns Q .. S - 1
      const predicting = (e: tf.Tensor3D) => {
        const h = model.hidden({ embeds: e, attentionMask: suffixMask, weightGrad: false, ...(past ? { past } : {}) }); // input-only backward
        return tf.slice(h, [0, 0, 0], [n, C, D]) as tf.Tensor3D; // the states that predict completion tokens 0 .. C - 1
      };
      // The clean pass: a constant (outside the differentiated function).
      const clean = predicting(embeds);
      const lp = model.tokenLogprobs(clean, tf.slice(ids, [0, P], [n, C]) as tf.Tensor2D, {
        temperature: cfg.temperature,
        maxChunkElements: cfg.maxChunkElements,
      });
      out = [tf.keep(lp.logprobs), tf.keep(lp.entropy)];
      if (!anyAnswer) return;
      const logP0 = answerLogProbs(model, clean, answerMask, cfg.temperature);
      const off = scoreOffset(packed, cfg.alignment) - Q; // in the suffix's columns
      const parts: tf.Tensor3D[] = [];
      if (off > 0) parts.push(tf.zeros([n, off, D]));
      parts.push(tf.tensor3d(noise, [n, C, D]));
      if (off + C < W) parts.push(tf.zeros([n, W - off - C, D]));
      const noisy = tf.add(embeds, tf.concat(parts, 1)) as tf.Tensor3D;
      const loss = (e: tf.Tensor3D): tf.Scalar => {
        const kl = klFromLogProbs(logP0, answerLogProbs(model, predicting(e), answerMask, cfg.temperature));
        kept = [tf.keep(kl)];
        return tf.sum(tf.mul(kl, has)) as tf.Scalar;
      };
      const g = tf.grad((x) => loss(x as tf.Tensor3D))(noisy);
      const ge = tf.mul(tf.slice(g, [0, off, 0], [n, C, D]), tf.slice(noisy, [0, off, 0], [n, C, D]));
      out.push(tf.keep(tf.abs(tf.sum(ge, 2))));
    });
    // Asynchronous reads: the webgpu backend has no synchronous read in Node.
    const logprobs = (await out[0]!.data()) as Float32Array;
    const entropy = (await out[1]!.data()) as Float32Array;
    if (!anyAnswer) return { scores: null, kl: new Float32Array(n), logprobs, entropy };
    const scores = (await out[2]!.data()) as Float32Array;
    const kl = Float32Array.from((await kept[0]!.data()) as Float32Array, (v, r) => (packed.hasAnswer[r] ? v : 0));
    return { scores, kl, logprobs, entropy };
  } finally {
    tf.dispose([...kept, ...out]);
    past?.dispose();
  }
}

/**
 * The noise of the scored slots of `packed`'s rows `[n, C, D]`: from `cfg.noise` (`[totalTokens * D]`)
 * or drawn from a Gaussian seeded per rollout (`seed/rollout`), so that the same seed gives the
 * same noise whatever the micro-batching.
 */
function noiseRows(batch: RolloutBatch, packed: PackedRows, cfg: NoisyKlConfig, D: number): Float32Array {
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
 * OAR-G raw scores (`saliency.noisyKl`) of a whole batch, micro-batched under `tokenBudget`, with
 * the log-probs and entropies of every completion token from the clean pass (at `temperature`).
 * Two forward passes and one input-only backward per micro-batch. Rollouts without an answer
 * span get no scores (flagged in `hasScores`, values 0), and log-probs all the same.
 */
export function noisyKl(model: Qwen3Model, batch: RolloutBatch, config: NoisyKlConfigInput = {}): Promise<FusedResult> {
  return oarG(model, batch, parseBackendConfig(NoisyKlConfigSchema, config, 'noisy-kl'));
}

async function oarG(model: Qwen3Model, batch: RolloutBatch, cfg: NoisyKlConfig): Promise<FusedResult> {
  checkBatch(batch, model.dims.V);
  const T = totalTokens(batch);
  const B = batch.numRollouts;
  const D = model.dims.D;
  if (cfg.noise && cfg.noise.length !== T * D) {
    throw new SaliencyError(
      'invalid_config',
      `noise has ${cfg.noise.length} values, expected totalTokens x hidden size = ${T} x ${D} = ${T * D}`,
      { field: 'noise' },
    );
  }
  const out: FusedResult = {
    signal: SIGNAL_NAMES.noisyKl,
    scores: new Float32Array(T),
    hasScores: new Uint8Array(B),
    missing: B,
    loss: new Float32Array(B),
    logprobs: new Float32Array(T),
    entropy: new Float32Array(T),
  };
  for (const rows of planMicroBatches(batch, cfg.tokenBudget)) {
    const packed = packRows(batch, rows, cfg.answerSpan, cfg.padId);
    const r = await noisyKlRows(model, packed, cfg, noiseRows(batch, packed, cfg, D));
    scatterRows(batch, packed, r.logprobs, out.logprobs);
    scatterRows(batch, packed, r.entropy, out.entropy);
    if (r.scores) {
      for (let k = 0; k < packed.n; k++) if (!packed.hasAnswer[k]) r.scores.fill(0, k * packed.C, (k + 1) * packed.C);
      scatterRows(batch, packed, r.scores, out.scores);
    }
    packed.rollouts.forEach((i, k) => {
      out.hasScores[i] = packed.hasAnswer[k]!;
      out.loss![i] = r.kl[k]!;
    });
  }
  countMissing(out);
  return out;
}

/** OAR-G's backend; fused: its clean pass's log-probs serve as a trainer's old log-probs. */
export const noisyKlBackend = defineBackend({
  name: 'noisy-kl',
  signal: SIGNAL_NAMES.noisyKl,
  configSchema: NoisyKlConfigSchema,
  fused: true,
  run: oarG,
});
