import {
  CoreError,
  packRollouts,
  planMicroBatches,
  referenceOf,
  scatterPacked,
  totalTokens,
  type PackedRollouts,
  type RolloutBatch,
} from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import type { FusedResult, SaliencyBackend, defineBackend } from '@rlvr/saliency';
import { z } from 'zod';
import { cosines, crossInner, materialize, materializedInner, selfInner, type Sequences } from './kernel.js';
import { tf } from './tf.js';

/** The per-rollout signal: `[B]` cos(g_i, g*) of rollout i's output-projection gradient with its group's reference's. */
export const GAR_COSINE = 'gar.cosine';

export const GarBackendConfigSchema = z.strictObject({
  /** divide the logits by this before the softmax; unset: the trainer's (this pass's log-probs are the step's old log-probs) */
  temperature: z.number().positive().default(1),
  /** most padded tokens (rows x (P + C)) in one forward pass; the pass also holds `[rows, C, V]` probabilities */
  tokenBudget: z.number().int().positive().default(8192),
  /** token id written into padding columns (never attended to) */
  padId: z.number().int().nonnegative().default(0),
  /** form the `[V, D]` gradients instead of the factorised sums (checking; cheaper where T S V > (T + S) V D) */
  materialize: z.boolean().default(false),
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
 * the tokens `[n, C]`, the completion mask, and the policy's own log-probs and entropies of those
 * tokens `[n, C]` (`tokenLogprobs`, as the trainer computes them). The caller disposes them.
 */
export function garSequences(model: Qwen3Model, packed: PackedRollouts, temperature: number): RolloutSequences {
  const { n, P, C, S } = packed;
  return tf.tidy(() => {
    const ids = tf.tensor2d(packed.ids, [n, S], 'int32');
    const h = model.hidden({ ids, attentionMask: tf.tensor2d(packed.attentionMask, [n, S]), weightGrad: false });
    const hs = tf.slice(h, [0, P - 1, 0], [n, C, model.dims.D]) as tf.Tensor3D;
    const targets = tf.slice(ids, [0, P], [n, C]) as tf.Tensor2D;
    const probs = tf.softmax(tf.div(model.project(hs, { weightGrad: false }), temperature)) as tf.Tensor3D;
    const { logprobs, entropy } = model.tokenLogprobs(hs, targets, { temperature, weightGrad: false });
    return { h: hs, probs, ids: targets, mask: tf.tensor2d(packed.completionMask, [n, C]), logprobs, entropy };
  });
}

const dispose = (s: RolloutSequences) => tf.dispose([s.h, s.probs, s.ids, s.mask, s.logprobs, s.entropy]);

/** The rollouts of each group, in batch order. */
function groupsOf(batch: RolloutBatch): number[][] {
  const byGroup = new Map<number, number[]>();
  for (let i = 0; i < batch.numRollouts; i++) {
    const g = batch.groupIndex[i]!;
    byGroup.set(g, [...(byGroup.get(g) ?? []), i]);
  }
  return [...byGroup.values()];
}

/** A one-rollout batch: rollout `i`'s prompt, its reference solution as the completion. */
function referenceBatch(batch: RolloutBatch, i: number, reference: Int32Array): RolloutBatch {
  const prompt = batch.promptTokens.subarray(batch.promptOffsets[i]!, batch.promptOffsets[i + 1]!);
  return {
    numRollouts: 1,
    groupIndex: new Int32Array(1),
    promptTokens: Int32Array.from(prompt),
    promptOffsets: Int32Array.from([0, prompt.length]),
    completionTokens: Int32Array.from(reference),
    completionOffsets: Int32Array.from([0, reference.length]),
    rewards: new Float32Array(1),
    finish: new Uint8Array(1),
    spans: new Int32Array(6).fill(-1),
  };
}

function sameTokens(a: Int32Array, b: Int32Array): boolean {
  return a.length === b.length && a.every((v, k) => v === b[k]);
}

/**
 * cos(g_i, g*) for every rollout: g_i the gradient of log pi(y_i | x) w.r.t. the output projection,
 * g* that of the group's reference solution under the same prompt (computed once per group), by the
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
  const need = `saliency backend gar`;
  for (const rows of groupsOf(batch)) {
    const first = rows[0]!;
    const reference = referenceOf(batch, first, need);
    for (const i of rows) {
      if (!sameTokens(referenceOf(batch, i, need), reference))
        throw new CoreError('invalid_batch', `the rollouts of group ${batch.groupIndex[i]} carry different reference solutions`, {
          rollout: i,
          field: 'referenceTokens',
        });
      if (batch.promptOffsets[i + 1]! === batch.promptOffsets[i]!)
        throw new CoreError('invalid_batch', 'prompt is empty: the first completion token needs at least one token of context', {
          rollout: i,
          field: 'prompt',
        });
    }
    const ref = garSequences(model, packRollouts(referenceBatch(batch, first, reference), [0], config.padId), config.temperature);
    const gRef = config.materialize ? materialize(ref) : null;
    try {
      const refNorm = gRef ? tf.tidy(() => tf.sum(tf.square(gRef))) : selfInner(ref);
      const refSelf = refNorm.dataSync()[0]!;
      refNorm.dispose();
      const include = new Array<boolean>(B).fill(false);
      for (const i of rows) include[i] = batch.completionOffsets[i + 1]! > batch.completionOffsets[i]!;
      for (const micro of planMicroBatches(batch, config.tokenBudget, include)) {
        const packed = packRollouts(batch, micro, config.padId);
        const seq = garSequences(model, packed, config.temperature);
        try {
          scatterPacked(batch, packed, seq.logprobs.dataSync(), logprobs);
          scatterPacked(batch, packed, seq.entropy.dataSync(), entropy);
          const r = gRef ? materializedInner(seq, gRef) : { cross: crossInner(seq, ref), self: selfInner(seq) };
          const cos = cosines(r.cross.dataSync(), r.self.dataSync(), refSelf);
          tf.dispose([r.cross, r.self]);
          micro.forEach((i, k) => {
            scores[i] = cos[k]!;
            hasScores[i] = 1;
          });
        } finally {
          dispose(seq);
        }
      }
    } finally {
      dispose(ref);
      gRef?.dispose();
    }
  }
  let missing = 0;
  for (let i = 0; i < B; i++) missing += 1 - hasScores[i]!;
  return { signal: GAR_COSINE, scores, width: 1, hasScores, missing, logprobs, entropy };
}

/** The `gar` signal backend (`shape: 'rollout'`, main thread, fused): `garCosines` as `gar.cosine`, with the old log-probs. */
export function garBackend(define: typeof defineBackend): SaliencyBackend {
  return define({ name: 'gar', signal: GAR_COSINE, shape: 'rollout', configSchema: GarBackendConfigSchema, fused: true, run: garCosines });
}
