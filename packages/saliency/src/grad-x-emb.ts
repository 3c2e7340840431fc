import { SIGNAL_NAMES, totalTokens, type RolloutBatch } from '@rlvr/core';
import type { KVCache, Qwen3Model } from '@rlvr/policy';
import { z } from 'zod';
import { tf } from './tf.js';
import { defineBackend } from './backend.js';
import { modelBackendOptions, parseBackendConfig } from './config.js';
import { checkBatch, packRows, planMicroBatches, scatterRows, scoreOffset, type PackedRows } from './layout.js';
import { countMissing, type FusedResult } from './result.js';

/** `grad-x-emb` (GRAIL): s_t = || dL_ans/de_t (x) e_t ||_2 with L_ans = -sum of the answer tokens' log-probs. */
export const GradXEmbConfigSchema = z.strictObject({ ...modelBackendOptions });
export type GradXEmbConfig = z.output<typeof GradXEmbConfigSchema>;
export type GradXEmbConfigInput = z.input<typeof GradXEmbConfigSchema>;

/** Host arrays of one micro-batch of the fused pass (`[n, C]` unless said). */
export interface GradXEmbRows {
  logprobs: Float32Array;
  entropy: Float32Array;
  /** null when no row has an answer (the backward pass is skipped) */
  scores: Float32Array | null;
  /** `[n]` L_ans per row (0 without an answer) */
  loss: Float32Array;
  /** `[n, S, D]` dL_ans/de at the columns from P - 1 on (0 before: not computed), only with `keepGradient` (tests) */
  gradient?: Float32Array;
}

/**
 * The fused pass on one packed micro-batch: ONE forward pass from the input embeddings gives the
 * log-probs of every completion token and L_ans = -sum of the answer tokens' log-probs (all rows
 * summed: rows are independent, so each row's gradient is that of its own L_ans); then the
 * backward pass w.r.t. the embeddings only (`tf.grad` of the embedding tensor: no parameter
 * gradient is computed or kept: the decoder and the LM head both run with `weightGrad: false`).
 *
 * The prompt columns before P - 1 run first, without a gradient (`model.prefix`): by causality
 * no score depends on their gradient, so the backward pass covers the W = S - P + 1 columns from
 * P - 1 on only, which attend to the prefix's keys and values as constants.
 *
 * Shapes: ids `[n, S]`, differentiated embeddings e `[n, W, D]` (columns P - 1 ..), hidden
 * `[n, W, D]`; the hidden state at column P - 1 + j predicts completion token j; score `[n, C]` =
 * || g (x) e ||_2 over D at column `scoreOffset + j`.
 */
export async function gradXEmbRows(
  model: Qwen3Model,
  packed: PackedRows,
  cfg: GradXEmbConfig,
  options: { keepGradient?: boolean } = {},
): Promise<GradXEmbRows> {
  const { n, P, C, S } = packed;
  const D = model.dims.D;
  const Q = P - 1; // first differentiated column: it predicts completion token 0
  const W = S - Q;
  const anyAnswer = packed.hasAnswer.some((a) => a === 1);
  let kept: tf.Tensor[] = [];
  // the scores `[n, C]` and the gradient, kept past the tidy and read asynchronously after it
  let out: { scores: tf.Tensor | null; gradient: tf.Tensor | null } = { scores: null, gradient: null };
  let past: KVCache | undefined;
  try {
    tf.tidy(() => {
      const ids = tf.tensor2d(packed.ids, [n, S], 'int32');
      const mask = tf.tensor2d(packed.attentionMask, [n, S]);
      const targets = tf.slice(ids, [0, P], [n, C]) as tf.Tensor2D;
      if (Q > 0)
        past = model.prefix(tf.slice(ids, [0, 0], [n, Q]) as tf.Tensor2D, tf.slice(mask, [0, 0], [n, Q]) as tf.Tensor2D, { width: S });
      const suffixMask = Q > 0 ? (tf.slice(mask, [0, Q], [n, W]) as tf.Tensor2D) : mask;
      // A fresh leaf: the gradient is taken w.r.t. this tensor, never the embedding table.
      const embeds = model.embed(Q > 0 ? (tf.slice(ids, [0, Q], [n, W]) as tf.Tensor2D) : ids);
      const { positions, answerTargets } = answerPositions(packed);
      const lpOptions = { temperature: cfg.temperature, weightGrad: false, maxChunkElements: cfg.maxChunkElements };
      const answerLoss = (e: tf.Tensor3D): tf.Scalar => {
        // Input-only: no weight-gradient product of any layer runs in the backward pass.
        const h = model.hidden({ embeds: e, attentionMask: suffixMask, weightGrad: false, ...(past ? { past } : {}) });
        const hs = tf.slice(h, [0, 0, 0], [n, C, D]) as tf.Tensor3D;
        // The same forward pass yields the old log-probs of every token: keep them past the
        // gradient's tidy. They do not lead to the loss, so the backward pass never visits them.
        const r = model.tokenLogprobs(hs, targets, lpOptions);
        kept = [tf.keep(r.logprobs), tf.keep(r.entropy)];
        if (positions.length === 0) return tf.scalar(0);
        // L_ans from the answer positions' hidden states only `[1, N, D]`: the backward pass then
        // recomputes the LM head for N positions instead of all n x C.
        const ha = tf.reshape(gatherRows(tf.reshape(h, [n * W, D]) as tf.Tensor2D, positions), [1, positions.length, D]) as tf.Tensor3D;
        const la = model.tokenLogprobs(ha, tf.tensor2d(answerTargets, [1, positions.length], 'int32'), lpOptions).logprobs;
        return tf.neg(tf.sum(la)) as tf.Scalar;
      };
      if (anyAnswer) {
        const g = tf.grad((x) => answerLoss(x as tf.Tensor3D))(embeds);
        const off = scoreOffset(packed, cfg.alignment) - Q;
        const ge = tf.mul(tf.slice(g, [0, off, 0], [n, C, D]), tf.slice(embeds, [0, off, 0], [n, C, D]));
        out = { scores: tf.keep(tf.sqrt(tf.sum(tf.square(ge), 2))), gradient: options.keepGradient ? tf.keep(g) : null };
      } else {
        answerLoss(embeds);
      }
    });
    // Asynchronous reads: the webgpu backend has no synchronous read in Node.
    const scores = out.scores === null ? null : ((await out.scores.data()) as Float32Array);
    const gradient = out.gradient === null ? undefined : fullWidth((await out.gradient.data()) as Float32Array, n, S, Q, D);
    const logprobs = (await kept[0]!.data()) as Float32Array;
    const entropy = (await kept[1]!.data()) as Float32Array;
    const loss = new Float32Array(n);
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let j = 0; j < C; j++) s -= packed.answerMask[r * C + j]! * logprobs[r * C + j]!;
      loss[r] = s;
    }
    return gradient ? { logprobs, entropy, scores, loss, gradient } : { logprobs, entropy, scores, loss };
  } finally {
    tf.dispose([...kept, ...(out.scores ? [out.scores] : []), ...(out.gradient ? [out.gradient] : [])]);
    past?.dispose();
  }
}

/** The suffix gradient `[n, S - Q, D]` placed in the full width `[n, S, D]` (0 in the Q prefix columns, whose gradient is never computed). */
function fullWidth(g: Float32Array, n: number, S: number, Q: number, D: number): Float32Array {
  if (Q === 0) return g;
  const out = new Float32Array(n * S * D);
  for (let r = 0; r < n; r++) out.set(g.subarray(r * (S - Q) * D, (r + 1) * (S - Q) * D), (r * S + Q) * D);
  return out;
}

/** Flat rows `r * W + j` of the differentiated hidden states (columns P - 1 ..) that predict the answer tokens, and those tokens. */
function answerPositions(packed: PackedRows): { positions: Int32Array; answerTargets: Int32Array } {
  const { n, P, C, S } = packed;
  const W = S - P + 1;
  const pos: number[] = [];
  const tgt: number[] = [];
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < C; j++) {
      if (packed.answerMask[r * C + j]) {
        pos.push(r * W + j);
        tgt.push(packed.ids[r * S + P + j]!);
      }
    }
  }
  return { positions: Int32Array.from(pos), answerTargets: Int32Array.from(tgt) };
}

/**
 * Rows `idx` of x `[M, D]` -> `[N, D]`, with a scatter-add gradient (tfjs's own gather gradient
 * needs UnsortedSegmentSum, which the wasm backend lacks).
 */
function gatherRows(x: tf.Tensor2D, idx: Int32Array): tf.Tensor2D {
  const [M, D] = x.shape;
  const f = (xx: tf.Tensor, save: tf.GradSaveFunc) => {
    const i = tf.tensor1d(idx, 'int32');
    save([i]);
    return {
      value: tf.gather(xx, i),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.scatterND(tf.reshape(saved[0]!, [idx.length, 1]), dy, [M, D]),
    };
  };
  return tf.customGrad(f as never)(x) as tf.Tensor2D;
}

/**
 * GRAIL scores and the old log-probs of a whole batch in one pass per micro-batch: the fused path
 * for a trainer (GRAIL then costs one input-gradient pass per rollout batch, nothing per
 * optimisation step). Rollouts without an answer span get log-probs, no scores (flagged in
 * `hasScores`, values 0).
 *
 * @returns `logprobs`, `entropy`, `scores` `[totalTokens]`; `hasScores`, `loss` (L_ans) `[B]`.
 */
export function logprobsWithGradXEmb(model: Qwen3Model, batch: RolloutBatch, config: GradXEmbConfigInput = {}): Promise<FusedResult> {
  return fusedPass(model, batch, parseBackendConfig(GradXEmbConfigSchema, config, 'grad-x-emb'));
}

async function fusedPass(model: Qwen3Model, batch: RolloutBatch, cfg: GradXEmbConfig): Promise<FusedResult> {
  checkBatch(batch, model.dims.V);
  const T = totalTokens(batch);
  const B = batch.numRollouts;
  const out: FusedResult = {
    signal: SIGNAL_NAMES.gradXEmb,
    scores: new Float32Array(T),
    hasScores: new Uint8Array(B),
    missing: B,
    loss: new Float32Array(B),
    logprobs: new Float32Array(T),
    entropy: new Float32Array(T),
  };
  for (const rows of planMicroBatches(batch, cfg.tokenBudget)) {
    const packed = packRows(batch, rows, cfg.answerSpan, cfg.padId);
    const r = await gradXEmbRows(model, packed, cfg);
    scatterRows(batch, packed, r.logprobs, out.logprobs);
    scatterRows(batch, packed, r.entropy, out.entropy);
    if (r.scores) {
      // Rows without an answer have exactly zero gradient; zero them explicitly anyway.
      for (let k = 0; k < packed.n; k++) if (!packed.hasAnswer[k]) r.scores.fill(0, k * packed.C, (k + 1) * packed.C);
      scatterRows(batch, packed, r.scores, out.scores);
    }
    packed.rollouts.forEach((i, k) => {
      out.hasScores[i] = packed.hasAnswer[k]!;
      out.loss![i] = r.loss[k]!;
    });
  }
  countMissing(out);
  return out;
}

/** GRAIL's backend: the fused pass (scores, and the old log-probs and entropies of the same forward). */
export const gradXEmbBackend = defineBackend({
  name: 'grad-x-emb',
  signal: SIGNAL_NAMES.gradXEmb,
  configSchema: GradXEmbConfigSchema,
  fused: true,
  onWorkers: true,
  run: fusedPass,
});
