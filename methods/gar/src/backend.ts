import { CoreError, packRollouts, planMicroBatches, scatterPacked, totalTokens, type PackedRollouts, type RolloutBatch } from '@rlvr/core';
import { compiledModuleUrl, type Qwen3Model } from '@rlvr/policy';
import { defineBackend, type FusedResult, type SaliencyBackend } from '@rlvr/saliency';
import { z } from 'zod';
import { cosines, crossInner, materialize, materializedInner, selfInner, type Sequences } from './kernel.js';
import { groupsWithReferences, referenceBatch } from './references.js';
import { GAR_COSINE } from './method.js';
import { tf } from './tf.js';

export const GarBackendConfigSchema = z.strictObject({
  /** divide the logits by this before the softmax; unset: the trainer's (this pass's log-probs are the step's old log-probs) */
  temperature: z.number().positive().default(1),
  /** most padded tokens (rows x (P + C)) in one forward pass; the pass also holds `[rows, C, V]` probabilities */
  tokenBudget: z.number().int().positive().default(8192),
  /** token id written into padding columns (never attended to) */
  padId: z.number().int().nonnegative().default(0),
  /** form the `[V, D]` gradients instead of the factorised sums (checking; cheaper where T S V > (T + S) V D) */
  materialize: z.boolean().default(false),
  /**
   * most reference probabilities (sum over groups of S x V) held at once: the references of that many
   * groups run together, then those groups' rollouts (default 2^25, 128 MB of float32)
   */
  maxReferenceElements: z
    .number()
    .int()
    .positive()
    .default(2 ** 25),
});
export type GarBackendConfig = z.output<typeof GarBackendConfigSchema>;

/** `Sequences` plus, for rollouts, the log-probs and entropies of their tokens `[n, C]` (the step's old log-probs). */
interface RolloutSequences extends Sequences {
  logprobs: tf.Tensor2D;
  entropy: tf.Tensor2D;
}

/**
 * One forward pass over packed rows, no gradient: the hidden states that predict each completion
 * token (column P - 1 + j predicts token j) `[n, C, D]`, their next-token distributions `[n, C, V]`,
 * the tokens `[n, C]`, the completion mask, and the log-probs and entropies of those tokens `[n, C]`
 * (from the same logits, as the policy's `tokenLogprobs` computes them). The caller disposes them.
 */
export function garSequences(model: Qwen3Model, packed: PackedRollouts, temperature: number): RolloutSequences {
  const { n, P, C, S } = packed;
  return tf.tidy(() => {
    const ids = tf.tensor2d(packed.ids, [n, S], 'int32');
    const h = model.hidden({ ids, attentionMask: tf.tensor2d(packed.attentionMask, [n, S]), weightGrad: false });
    const hs = tf.slice(h, [0, P - 1, 0], [n, C, model.dims.D]) as tf.Tensor3D;
    const targets = tf.slice(ids, [0, P], [n, C]) as tf.Tensor2D;
    // one projection for both: log p = z - logsumexp(z), as the policy's tokenLogprobs computes it
    const z = tf.div(model.project(hs, { weightGrad: false }), temperature);
    const logp = tf.sub(z, tf.logSumExp(z, 2, true)) as tf.Tensor3D;
    const probs = tf.exp(logp) as tf.Tensor3D;
    // a one-hot product, not a batched gather (wasm's gather with batchDims reads out of bounds)
    const logprobs = tf.sum(tf.mul(logp, tf.oneHot(targets, model.dims.V)), 2) as tf.Tensor2D;
    const entropy = tf.neg(tf.sum(tf.mul(probs, logp), 2)) as tf.Tensor2D;
    return { h: hs, probs, ids: targets, mask: tf.tensor2d(packed.completionMask, [n, C]), logprobs, entropy };
  });
}

const dispose = (s: RolloutSequences) => tf.dispose([s.h, s.probs, s.ids, s.mask, s.logprobs, s.entropy]);

/** One group's reference: its sequence trimmed to its S tokens, ||g*||², and with `materialize` g* `[1, V, D]`. */
interface Reference {
  seq: Sequences;
  self: number;
  g: tf.Tensor3D | null;
}

/** The references of `chunk`'s groups, their forward passes micro-batched under `tokenBudget`. The caller disposes them. */
function referenceSequences(
  model: Qwen3Model,
  batch: RolloutBatch,
  chunk: readonly { rows: number[]; reference: Int32Array }[],
  config: GarBackendConfig,
): Reference[] {
  const refBatch = referenceBatch(
    batch,
    chunk.map((c) => c.rows[0]!),
    chunk.map((c) => c.reference),
  );
  const out: Reference[] = new Array(chunk.length);
  for (const micro of planMicroBatches(refBatch, config.tokenBudget)) {
    const seq = garSequences(model, packRollouts(refBatch, micro, config.padId), config.temperature);
    try {
      micro.forEach((k, r) => {
        const S = chunk[k]!.reference.length;
        const [, , D] = seq.h.shape;
        const V = seq.probs.shape[2];
        const one = tf.tidy(() => ({
          h: tf.slice(seq.h, [r, 0, 0], [1, S, D]) as tf.Tensor3D,
          probs: tf.slice(seq.probs, [r, 0, 0], [1, S, V]) as tf.Tensor3D,
          ids: tf.slice(seq.ids, [r, 0], [1, S]) as tf.Tensor2D,
          mask: tf.slice(seq.mask, [r, 0], [1, S]) as tf.Tensor2D,
        }));
        const g = config.materialize ? materialize(one) : null;
        const norm = g ? tf.tidy(() => tf.sum(tf.square(g))) : selfInner(one);
        out[k] = { seq: one, self: norm.dataSync()[0]!, g };
        norm.dispose();
      });
    } finally {
      dispose(seq);
    }
  }
  return out;
}

/**
 * cos(g_i, g*) for every rollout: g_i the gradient of log pi(y_i | x) w.r.t. the output projection,
 * g* that of the group's reference solution under the same prompt (computed once per group: the
 * references of a chunk of groups run first, micro-batched, then those groups' rollouts), by the
 * factorised inner products (`crossInner`, `selfInner`) or, with `materialize`, the `[V, D]`
 * gradients. Rollouts with no completion tokens get 0 and `hasScores` 0. The same forward pass gives
 * every completion token's log-prob and entropy (a fused pass: the trainer need not run its own).
 * Every tensor is disposed.
 */
export function garCosines(model: Qwen3Model, batch: RolloutBatch, config: GarBackendConfig): FusedResult {
  const B = batch.numRollouts;
  const scores = new Float32Array(B);
  const hasScores = new Uint8Array(B);
  const logprobs = new Float32Array(totalTokens(batch));
  const entropy = new Float32Array(totalTokens(batch));
  const groups = groupsWithReferences(batch, 'saliency backend gar');
  const V = model.dims.V;
  const context = model.config.max_position_embeddings;
  for (const { rows, reference } of groups) {
    const P = batch.promptOffsets[rows[0]! + 1]! - batch.promptOffsets[rows[0]!]!;
    if (P + reference.length > context)
      throw new CoreError(
        'invalid_batch',
        `the reference solution is ${reference.length} tokens; with the prompt's ${P} it exceeds the policy's context of ${context} tokens`,
        { rollout: rows[0]!, field: 'referenceTokens' },
      );
  }
  // groups in chunks whose references' [S, V] probabilities fit `maxReferenceElements` (at least one group)
  for (let g0 = 0; g0 < groups.length; ) {
    let g1 = g0 + 1;
    let held = groups[g0]!.reference.length * V;
    while (g1 < groups.length && held + groups[g1]!.reference.length * V <= config.maxReferenceElements)
      held += groups[g1++]!.reference.length * V;
    const chunk = groups.slice(g0, g1);
    g0 = g1;
    const refs = referenceSequences(model, batch, chunk, config);
    try {
      const include = new Array<boolean>(B).fill(false);
      const refOf = new Map<number, number>();
      chunk.forEach(({ rows }, k) =>
        rows.forEach((i) => {
          include[i] = batch.completionOffsets[i + 1]! > batch.completionOffsets[i]!;
          refOf.set(i, k);
        }),
      );
      for (const micro of planMicroBatches(batch, config.tokenBudget, include)) {
        const packed = packRollouts(batch, micro, config.padId);
        const seq = garSequences(model, packed, config.temperature);
        try {
          scatterPacked(batch, packed, seq.logprobs.dataSync(), logprobs);
          scatterPacked(batch, packed, seq.entropy.dataSync(), entropy);
          // the rows of each group in this micro-batch, against that group's reference
          const byRef = new Map<number, number[]>();
          micro.forEach((i, r) => byRef.set(refOf.get(i)!, [...(byRef.get(refOf.get(i)!) ?? []), r]));
          for (const [k, at] of byRef) {
            const ref = refs[k]!;
            const r = tf.tidy(() => {
              const idx = tf.tensor1d(at, 'int32');
              const sub = {
                h: tf.gather(seq.h, idx),
                probs: tf.gather(seq.probs, idx),
                ids: tf.gather(seq.ids, idx),
                mask: tf.gather(seq.mask, idx),
              };
              return ref.g ? materializedInner(sub, ref.g) : { cross: crossInner(sub, ref.seq), self: selfInner(sub) };
            });
            const cos = cosines(r.cross.dataSync(), r.self.dataSync(), ref.self);
            tf.dispose([r.cross, r.self]);
            at.forEach((r, n) => {
              scores[micro[r]!] = cos[n]!;
              hasScores[micro[r]!] = 1;
            });
          }
        } finally {
          dispose(seq);
        }
      }
    } finally {
      for (const r of refs) {
        tf.dispose([r.seq.h, r.seq.probs, r.seq.ids, r.seq.mask]);
        r.g?.dispose();
      }
    }
  }
  let missing = 0;
  for (let i = 0; i < B; i++) missing += 1 - hasScores[i]!;
  return { signal: GAR_COSINE, scores, width: 1, hasScores, missing, logprobs, entropy };
}

const spec = { name: 'gar', signal: GAR_COSINE, shape: 'rollout', configSchema: GarBackendConfigSchema, fused: true } as const;

/**
 * The `gar` signal backend (`shape: 'rollout'`, fused): `garCosines` as `gar.cosine`, with the old log-probs.
 * Without policy workers it runs on the whole batch in this thread. With them (`onWorkers`) each worker runs
 * `garWorkerBackend` of this module (compiled) on its contiguous share of the rollouts, and computes the
 * references of the groups in its share: a group the split cuts in two has its reference computed by both
 * workers (the same numbers, up to float rounding, twice the work for that group).
 */
export function garBackend(define: typeof defineBackend): SaliencyBackend {
  return define({
    ...spec,
    onWorkers: { module: compiledModuleUrl(new URL('./backend.js', import.meta.url)), exportName: 'garWorkerBackend' },
    run: garCosines,
  });
}

/**
 * The `gar` backend as a policy worker imports it (the module and export `garBackend`'s `onWorkers` names):
 * `garCosines` on the worker's share (`@rlvr/saliency` renames an error's rollout to its index in the batch).
 */
export const garWorkerBackend: SaliencyBackend = defineBackend({ ...spec, run: garCosines });
