import { CoreError, packRollouts, planMicroBatches, scatterPacked, totalTokens, type PackedRollouts, type RolloutBatch } from '@rlvr/core';
import { compiledModuleUrl, type Qwen3Model } from '@rlvr/policy';
import { defineBackend, type FusedResult, type SaliencyBackend } from '@rlvr/saliency';
import { z } from 'zod';
import {
  cosines,
  crossInner,
  gradTimesHidden,
  materialize,
  materializedInner,
  selfInner,
  vectorCosines,
  type Sequences,
} from './kernel.js';
import { groupsWithReferences, referenceBatch } from './references.js';
import { GAR_COSINE } from './method.js';
import { tf } from './tf.js';

export const GarBackendConfigSchema = z
  .strictObject({
    /**
     * which gradient the cosine compares: `grad-x-hidden` (the authors' code: sum_t (dCE_t/dh_t) ⊙ h_t at the
     * output layer's input, a D-vector) or `head-weight` (the gradient of log pi w.r.t. the output projection, `[V, D]`)
     */
    vector: z.enum(['grad-x-hidden', 'head-weight']).default('grad-x-hidden'),
    /** divide the logits by this before the softmax; unset: the trainer's (this pass's log-probs are the step's old log-probs) */
    temperature: z.number().positive().default(1),
    /** most padded tokens (rows x (P + C)) in one forward pass; the pass also holds `[rows, C, V]` probabilities */
    tokenBudget: z.number().int().positive().default(8192),
    /** token id written into padding columns (never attended to) */
    padId: z.number().int().nonnegative().default(0),
    /** with `vector: head-weight`: form the `[V, D]` gradients instead of the factorised sums (cheaper where T S V > (T + S) V D) */
    materialize: z.boolean().default(false),
    /**
     * most anchor probabilities (sum over the anchors of S x V) held at once: the anchors of that many
     * groups run together, then those groups' rollouts (default 2^25, 128 MB of float32)
     */
    maxReferenceElements: z
      .number()
      .int()
      .positive()
      .default(2 ** 25),
    /**
     * how the expert solution's cosine (real) and the best teacher anchor's (aux) combine, where a group has teacher
     * anchors: `residual` real + teacherWeight * max(0, aux - real) (the authors' default), `max` max(real,
     * teacherWeight * aux), `expert` real only
     */
    anchors: z.enum(['residual', 'max', 'expert']).default('residual'),
    /** the teacher anchors' weight in `anchors` (the authors' `gar_aux_weight`) */
    teacherWeight: z.number().nonnegative().default(0.5),
  })
  .superRefine((c, ctx) => {
    if (c.materialize && c.vector !== 'head-weight')
      ctx.addIssue({
        code: 'custom',
        path: ['materialize'],
        message: "applies to vector 'head-weight' only (grad-x-hidden forms no [V, D] gradient)",
      });
  });
export type GarBackendConfig = z.output<typeof GarBackendConfigSchema>;

/**
 * A group's teacher anchors (besides its expert solution, `RolloutBatch.referenceTokens`): given the batch index of
 * the group's first rollout, the token ids of each teacher solution (tokenised as a completion; none: `[]`).
 */
export type TeacherAnchors = (rollout: number) => readonly Int32Array[];

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

/**
 * One anchor (an expert or teacher solution under the group's prompt): with `grad-x-hidden` its vector `[D]`
 * (read back); with `head-weight` its sequence trimmed to its S tokens, ||g*||², and with `materialize` g* `[1, V, D]`.
 */
interface VectorAnchor {
  vector: Float32Array;
}
interface GradientAnchor {
  seq: Sequences;
  self: number;
  g: tf.Tensor3D | null;
}
type Anchor = VectorAnchor | GradientAnchor;

function disposeAnchor(a: Anchor): void {
  if ('seq' in a) {
    tf.dispose([a.seq.h, a.seq.probs, a.seq.ids, a.seq.mask]);
    a.g?.dispose();
  }
}

/**
 * The anchors of `chunk`'s groups (per group: the expert solution, then its teachers), their forward passes
 * micro-batched under `tokenBudget`. The caller disposes them (`disposeAnchor`).
 */
async function anchorsOf(
  model: Qwen3Model,
  batch: RolloutBatch,
  chunk: readonly { rows: number[]; anchors: readonly Int32Array[] }[],
  config: GarBackendConfig,
): Promise<Anchor[][]> {
  const owner = chunk.flatMap((c, k) => c.anchors.map((_, a) => ({ k, a })));
  const refBatch = referenceBatch(
    batch,
    chunk.flatMap((c) => c.anchors.map(() => c.rows[0]!)),
    chunk.flatMap((c) => c.anchors),
  );
  const out: Anchor[][] = chunk.map((c) => new Array<Anchor>(c.anchors.length));
  const W = model.lmHeadWeight();
  for (const micro of planMicroBatches(refBatch, config.tokenBudget)) {
    const seq = garSequences(model, packRollouts(refBatch, micro, config.padId), config.temperature);
    try {
      if (config.vector === 'grad-x-hidden') {
        const v = gradTimesHidden(seq, W);
        const data = (await v.data()) as Float32Array;
        v.dispose();
        const D = model.dims.D;
        micro.forEach((j, r) => {
          const { k, a } = owner[j]!;
          out[k]![a] = { vector: data.slice(r * D, (r + 1) * D) };
        });
        continue;
      }
      for (const [r, j] of micro.entries()) {
        const { k, a } = owner[j]!;
        const S = chunk[k]!.anchors[a]!.length;
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
        const self = (await norm.data())[0]!;
        norm.dispose();
        out[k]![a] = { seq: one, self, g };
      }
    } finally {
      dispose(seq);
    }
  }
  return out;
}

/** The cosines `[rows.length]` of rows `at` of `seq` (one micro-batch) against one head-weight anchor. */
async function headWeightCosines(seq: Sequences, at: readonly number[], anchor: GradientAnchor): Promise<Float64Array> {
  const r = tf.tidy(() => {
    const idx = tf.tensor1d(at as number[], 'int32');
    const sub = {
      h: tf.gather(seq.h, idx),
      probs: tf.gather(seq.probs, idx),
      ids: tf.gather(seq.ids, idx),
      mask: tf.gather(seq.mask, idx),
    };
    return anchor.g ? materializedInner(sub, anchor.g) : { cross: crossInner(sub, anchor.seq), self: selfInner(sub) };
  });
  try {
    return cosines(await r.cross.data(), await r.self.data(), anchor.self);
  } finally {
    tf.dispose([r.cross, r.self]);
  }
}

/** One rollout's cosine from its expert cosine and its teachers' (the authors' `gar_anchor_aggregation`). */
export function combineAnchors(
  expert: number,
  teachers: readonly number[],
  config: Pick<GarBackendConfig, 'anchors' | 'teacherWeight'>,
): number {
  if (teachers.length === 0 || config.anchors === 'expert') return expert;
  const aux = Math.max(...teachers);
  return config.anchors === 'residual'
    ? expert + config.teacherWeight * Math.max(0, aux - expert)
    : Math.max(expert, config.teacherWeight * aux);
}

/**
 * The GAR cosine of every rollout with its group's anchors: its expert solution (`referenceTokens`) and, given
 * `teachers`, teacher solutions, each teacher-forced under the group's prompt (computed once per group: the
 * anchors of a chunk of groups run first, micro-batched, then those groups' rollouts), combined by `anchors`.
 * `vector` picks the gradient compared: `grad-x-hidden` (the authors' D-vector, `gradTimesHidden`) or
 * `head-weight` (the `[V, D]` output-projection gradient, by the factorised inner products `crossInner`,
 * `selfInner`, or with `materialize` formed whole). Rollouts with no completion tokens get 0 and `hasScores` 0.
 * The same forward pass gives every completion token's log-prob and entropy (a fused pass: the trainer need
 * not run its own). Tensors are read back asynchronously (`data()`), and every one is disposed.
 */
export async function garCosines(
  model: Qwen3Model,
  batch: RolloutBatch,
  config: GarBackendConfig,
  teachers?: TeacherAnchors,
): Promise<FusedResult> {
  const B = batch.numRollouts;
  const scores = new Float32Array(B);
  const hasScores = new Uint8Array(B);
  const logprobs = new Float32Array(totalTokens(batch));
  const entropy = new Float32Array(totalTokens(batch));
  const groups = groupsWithReferences(batch, 'saliency backend gar').map(({ rows, reference }) => ({
    rows,
    anchors: [reference, ...(teachers?.(rows[0]!) ?? [])],
  }));
  const V = model.dims.V;
  const W = model.lmHeadWeight();
  const context = model.config.max_position_embeddings;
  for (const { rows, anchors } of groups) {
    const P = batch.promptOffsets[rows[0]! + 1]! - batch.promptOffsets[rows[0]!]!;
    anchors.forEach((a, k) => {
      if (P + a.length > context)
        throw new CoreError(
          'invalid_batch',
          `the ${k === 0 ? 'reference solution' : `teacher anchor ${k - 1}`} is ${a.length} tokens; with the prompt's ${P} it exceeds the policy's context of ${context} tokens`,
          { rollout: rows[0]!, field: k === 0 ? 'referenceTokens' : 'teachers' },
        );
      if (a.length === 0 && k > 0)
        throw new CoreError('invalid_batch', `teacher anchor ${k - 1} is empty`, { rollout: rows[0]!, field: 'teachers' });
    });
  }
  const size = (g: { anchors: readonly Int32Array[] }) => g.anchors.reduce((s, a) => s + a.length * V, 0);
  // groups in chunks whose anchors' [S, V] probabilities fit `maxReferenceElements` (at least one group)
  for (let g0 = 0; g0 < groups.length; ) {
    let g1 = g0 + 1;
    let held = size(groups[g0]!);
    while (g1 < groups.length && held + size(groups[g1]!) <= config.maxReferenceElements) held += size(groups[g1++]!);
    const chunk = groups.slice(g0, g1);
    g0 = g1;
    const anchors = await anchorsOf(model, batch, chunk, config);
    try {
      const include = new Array<boolean>(B).fill(false);
      const groupOf = new Map<number, number>();
      chunk.forEach(({ rows }, k) =>
        rows.forEach((i) => {
          include[i] = batch.completionOffsets[i + 1]! > batch.completionOffsets[i]!;
          groupOf.set(i, k);
        }),
      );
      for (const micro of planMicroBatches(batch, config.tokenBudget, include)) {
        const packed = packRollouts(batch, micro, config.padId);
        const seq = garSequences(model, packed, config.temperature);
        try {
          scatterPacked(batch, packed, await seq.logprobs.data(), logprobs);
          scatterPacked(batch, packed, await seq.entropy.data(), entropy);
          // per row r of the micro-batch: its cosine with each anchor of its group
          const perAnchor: number[][] = micro.map(() => []);
          if (config.vector === 'grad-x-hidden') {
            const v = gradTimesHidden(seq, W);
            const data = await v.data();
            v.dispose();
            const D = model.dims.D;
            micro.forEach((i, r) => {
              const row = data.subarray(r * D, (r + 1) * D);
              for (const a of anchors[groupOf.get(i)!]!) perAnchor[r]!.push(vectorCosines(row, (a as VectorAnchor).vector)[0]!);
            });
          } else {
            const byGroup = new Map<number, number[]>();
            micro.forEach((i, r) => byGroup.set(groupOf.get(i)!, [...(byGroup.get(groupOf.get(i)!) ?? []), r]));
            for (const [k, at] of byGroup)
              for (const a of anchors[k]!) {
                const cos = await headWeightCosines(seq, at, a as GradientAnchor);
                at.forEach((r, n) => perAnchor[r]!.push(cos[n]!));
              }
          }
          micro.forEach((i, r) => {
            const [expert, ...rest] = perAnchor[r]!;
            scores[i] = combineAnchors(expert!, rest, config);
            hasScores[i] = 1;
          });
        } finally {
          dispose(seq);
        }
      }
    } finally {
      for (const group of anchors) for (const a of group) disposeAnchor(a);
    }
  }
  let missing = 0;
  for (let i = 0; i < B; i++) missing += 1 - hasScores[i]!;
  return { signal: GAR_COSINE, scores, width: 1, hasScores, missing, logprobs, entropy };
}

const spec = { name: 'gar', signal: GAR_COSINE, shape: 'rollout', configSchema: GarBackendConfigSchema, fused: true } as const;
const run = (model: Qwen3Model, batch: RolloutBatch, config: GarBackendConfig) => garCosines(model, batch, config);

/**
 * The `gar` signal backend (`shape: 'rollout'`, fused): `garCosines` as `gar.cosine`, with the old log-probs.
 * Without policy workers it runs on the whole batch in this thread. With them (`onWorkers`) each worker runs
 * `garWorkerBackend` of this module (compiled) on its contiguous share of the rollouts, and computes the
 * anchors of the groups in its share: a group the split cuts in two has its anchors computed by both
 * workers (the same numbers, up to float rounding, twice the work for that group).
 */
export function garBackend(define: typeof defineBackend): SaliencyBackend {
  return define({
    ...spec,
    onWorkers: { module: compiledModuleUrl(new URL('./backend.js', import.meta.url)), exportName: 'garWorkerBackend' },
    run,
  });
}

/**
 * The `gar` backend as a policy worker imports it (the module and export `garBackend`'s `onWorkers` names):
 * `garCosines` on the worker's share (`@rlvr/saliency` renames an error's rollout to its index in the batch).
 */
export const garWorkerBackend: SaliencyBackend = defineBackend({ ...spec, run });
