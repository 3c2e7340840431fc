import type { RolloutBatch } from '@rlvr/core';
import { TrainerError } from './errors.js';

/**
 * Split the rollouts to train on into micro-batches whose padded size
 * (rollouts x (longest prompt + longest completion)) stays within `tokenBudget`.
 * Rollouts are taken in length order so that padding stays small; the order is
 * deterministic (ties keep index order). A single rollout over the budget gets a
 * micro-batch of its own rather than being dropped.
 */
export function planMicroBatches(batch: RolloutBatch, include: ArrayLike<boolean> | null, tokenBudget: number): number[][] {
  if (!(tokenBudget > 0)) throw new TrainerError('invalid_config', `tokenBudget must be positive, got ${tokenBudget}`);
  const idx: number[] = [];
  for (let i = 0; i < batch.numRollouts; i++) if (include === null || include[i]) idx.push(i);
  const len = (i: number) => batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
  const plen = (i: number) => batch.promptOffsets[i + 1]! - batch.promptOffsets[i]!;
  idx.sort((a, b) => len(a) + plen(a) - (len(b) + plen(b)) || a - b);
  const out: number[][] = [];
  let cur: number[] = [];
  let maxP = 0;
  let maxC = 0;
  for (const i of idx) {
    const p = Math.max(maxP, plen(i));
    const c = Math.max(maxC, len(i));
    if (cur.length > 0 && (cur.length + 1) * (p + c) > tokenBudget) {
      out.push(cur);
      cur = [];
      maxP = 0;
      maxC = 0;
    }
    cur.push(i);
    maxP = Math.max(maxP, plen(i));
    maxC = Math.max(maxC, len(i));
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * A micro-batch laid out for a decoder: prompts left-padded, completions
 * right-padded, so that every completion starts at the same column P.
 * All arrays are row-major.
 */
export interface PackedMicroBatch {
  /** rollout indices in the batch, one per row */
  rollouts: number[];
  /** rows */
  size: number;
  /** P: padded prompt length */
  promptLength: number;
  /** C: padded completion length */
  completionLength: number;
  /** [size, P + C] token ids (pad where masked) */
  ids: Int32Array;
  /** [size, P + C] 1 for real tokens */
  attentionMask: Float32Array;
  /** [size, C] 1 for completion tokens that enter the loss */
  completionMask: Float32Array;
  /** [size, C] copied from a per-token array of the batch (advantages, old log-probs) */
  gather(perToken: ArrayLike<number>): Float32Array;
}

/** Lay out rollouts `rows` of the batch for the decoder (see `PackedMicroBatch`). */
export function packMicroBatch(batch: RolloutBatch, rows: readonly number[], padId: number): PackedMicroBatch {
  let P = 0;
  let C = 0;
  for (const i of rows) {
    P = Math.max(P, batch.promptOffsets[i + 1]! - batch.promptOffsets[i]!);
    C = Math.max(C, batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
  }
  const n = rows.length;
  const S = P + C;
  const ids = new Int32Array(n * S).fill(padId);
  const attentionMask = new Float32Array(n * S);
  const completionMask = new Float32Array(n * C);
  rows.forEach((i, r) => {
    const p0 = batch.promptOffsets[i]!;
    const pl = batch.promptOffsets[i + 1]! - p0;
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    ids.set(batch.promptTokens.subarray(p0, p0 + pl), r * S + P - pl);
    attentionMask.fill(1, r * S + P - pl, r * S + P + cl);
    ids.set(batch.completionTokens.subarray(c0, c0 + cl), r * S + P);
    completionMask.fill(1, r * C, r * C + cl);
  });
  const gather = (perToken: ArrayLike<number>): Float32Array => {
    const out = new Float32Array(n * C);
    rows.forEach((i, r) => {
      const c0 = batch.completionOffsets[i]!;
      const cl = batch.completionOffsets[i + 1]! - c0;
      for (let t = 0; t < cl; t++) out[r * C + t] = perToken[c0 + t]!;
    });
    return out;
  };
  return { rollouts: [...rows], size: n, promptLength: P, completionLength: C, ids, attentionMask, completionMask, gather };
}
