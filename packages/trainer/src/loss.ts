import { type RolloutBatch, type PackedRollouts, gatherPacked, packRollouts, planMicroBatches } from '@rlvr/core';
import { microBatchLogprobs, type Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import type { TrainerConfig } from './config.js';
import { clippedSurrogate } from './surrogate.js';
import { aggregate, aggregationScale, type AggregationScale } from './aggregate.js';
import { klPenalty } from './kl.js';

/**
 * The loss of one optimizer step and its gradients, micro-batch by micro-batch: the one code path
 * of the in-process update and of a policy worker's share of it (`workers/gradient-task.ts`).
 */

/** Sums gathered over the micro-batches of a step, turned into metrics at the end. */
export interface Tally {
  tokens: number;
  clipLow: number;
  clipHigh: number;
  approxKl: number;
  entropy: number;
  refKl: number;
  loss: number;
  updates: number;
  gradNorm: number;
  /** advantage refreshes, the seconds they took, sum |refreshed - given| and sum |given| over their tokens */
  refreshes: number;
  refreshSeconds: number;
  refreshDiff: number;
  refreshAbs: number;
  /** with policy workers: seconds publishing the weights (+ the slowest replica's re-load), and summing the workers' gradients */
  weightSyncSeconds: number;
  gradReduceSeconds: number;
}

export function emptyTally(): Tally {
  return {
    tokens: 0,
    clipLow: 0,
    clipHigh: 0,
    approxKl: 0,
    entropy: 0,
    refKl: 0,
    loss: 0,
    updates: 0,
    gradNorm: 0,
    refreshes: 0,
    refreshSeconds: 0,
    refreshDiff: 0,
    refreshAbs: 0,
    weightSyncSeconds: 0,
    gradReduceSeconds: 0,
  };
}

/** The per-token sums one micro-batch adds to a `Tally`. */
export type TokenSums = Pick<Tally, 'tokens' | 'clipLow' | 'clipHigh' | 'approxKl' | 'entropy' | 'refKl'>;

export function addTokenSums(into: Tally, s: TokenSums): void {
  into.tokens += s.tokens;
  into.clipLow += s.clipLow;
  into.clipHigh += s.clipHigh;
  into.approxKl += s.approxKl;
  into.entropy += s.entropy;
  into.refKl += s.refKl;
}

/** What the loss of one optimizer step reads besides the model: all of it host data, so a worker can get it. */
export interface StepLossInput {
  config: TrainerConfig;
  padId: number;
  batch: RolloutBatch;
  /** per-token `[totalTokens]`: advantages, old log-probs, reference log-probs (null without a reference model) */
  adv: Float32Array;
  old: Float32Array;
  ref: Float32Array | null;
  /** the step's aggregation scale, from all its rows (`lossScale`) */
  scale: AggregationScale;
}

/**
 * The aggregation scale of one optimizer step over `rows`: global, whichever share of them a worker
 * computes. `maxLen`: the longest completion of the whole `Trainer.step` (all its mini-batches).
 */
export function lossScale(config: TrainerConfig, batch: RolloutBatch, rows: readonly number[], maxLen: number): AggregationScale {
  const valid = rows.map((i) => batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
  const L = config.maxCompletionLength ?? maxLen;
  // TRL's dr_grpo divides by all rows of the (micro-)batch, masked ones included: B / miniBatches per optimizer step
  return aggregationScale(
    valid,
    L,
    config.lossConstant ?? (config.lossConstantRows === 'all' ? Math.max((batch.numRollouts / config.miniBatches) * L, 1) : undefined),
  );
}

/**
 * Loss and summed gradients over the micro-batches of `rows` (planned under `tokenBudget`); the
 * per-token sums go into `sums`. Gradients are keyed by parameter name, in `model.params` order;
 * the caller disposes them.
 */
export async function accumulateGradients(
  model: Qwen3Model,
  input: StepLossInput,
  rows: readonly number[],
  sums: TokenSums,
): Promise<{ loss: number; grads: Map<string, tf.Tensor> }> {
  const { batch, config, padId } = input;
  const names = [...model.params.keys()];
  const vars = [...model.params.values()];
  const byVarName = new Map(vars.map((v, k) => [v.name, names[k]!]));
  const grads = new Map<string, tf.Tensor>();
  let loss = 0;
  for (const mb of planMicroBatches(batch, config.tokenBudget, maskOf(batch.numRollouts, rows))) {
    const packed = packRollouts(batch, mb, padId);
    const kept: tf.Scalar[] = [];
    const { value, grads: g } = tf.variableGrads(() => microBatchLoss(model, input, packed, kept), vars);
    // one asynchronous read of the six scalars (the webgpu backend has no synchronous read in Node)
    const all = tf.stack([value, ...kept]);
    tf.dispose([value, ...kept]);
    const [l, clipLow, clipHigh, approxKl, entropy, refKl] = await all.data();
    all.dispose();
    loss += l!;
    sums.tokens += sum(packed.completionMask);
    sums.clipLow += clipLow!;
    sums.clipHigh += clipHigh!;
    sums.approxKl += approxKl!;
    sums.entropy += entropy!;
    sums.refKl += refKl ?? 0;
    for (const [varName, t] of Object.entries(g)) {
      const name = byVarName.get(varName)!;
      const prev = grads.get(name);
      if (prev === undefined) grads.set(name, t);
      else {
        grads.set(name, tf.add(prev, t));
        prev.dispose();
        t.dispose();
      }
    }
  }
  return { loss, grads };
}

/** The micro-batch's share of the loss; per-token sums for metrics are kept in `kept`. */
function microBatchLoss(model: Qwen3Model, input: StepLossInput, mb: PackedRollouts, kept: tf.Scalar[]): tf.Scalar {
  const { config: cfg, batch, adv, old, ref, scale } = input;
  const shape: [number, number] = [mb.n, mb.C];
  const { logp, entropy } = microBatchLogprobs(model, mb, { temperature: cfg.temperature });
  const mask = tf.tensor2d(mb.completionMask, shape);
  const oldT = tf.tensor2d(gatherPacked(batch, mb, old), shape);
  const terms = clippedSurrogate(logp, oldT, tf.tensor2d(gatherPacked(batch, mb, adv), shape), cfg);
  let total = aggregate(terms.loss, mask, cfg.aggregation, scale);
  const refT = ref ? tf.tensor2d(gatherPacked(batch, mb, ref), shape) : null;
  if (refT && cfg.klCoef > 0)
    total = tf.add(total, tf.mul(aggregate(klPenalty(logp, refT, cfg.klEstimator), mask, cfg.aggregation, scale), cfg.klCoef));
  if (cfg.entropyCoef > 0) total = tf.sub(total, tf.mul(aggregate(entropy, mask, cfg.aggregation, scale), cfg.entropyCoef));
  const masked = (x: tf.Tensor) => tf.keep(tf.sum(tf.mul(x, mask)) as tf.Scalar);
  kept.push(masked(terms.clippedLow), masked(terms.clippedHigh), masked(klPenalty(logp, oldT, 'k3')), masked(entropy));
  if (refT) kept.push(masked(klPenalty(logp, refT, cfg.klEstimator)));
  return total;
}

export function maskOf(n: number, rows: readonly number[]): boolean[] {
  const m = new Array<boolean>(n).fill(false);
  for (const i of rows) m[i] = true;
  return m;
}

function sum(a: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]!;
  return s;
}
