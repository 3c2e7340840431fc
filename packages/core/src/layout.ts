import type { RolloutBatch } from './batch.js';
import { CoreError } from './errors.js';

/**
 * Split rollouts into micro-batches whose padded size (rows x (longest prompt +
 * longest completion)) stays within `tokenBudget`. Rollouts are taken in length
 * order so that padding stays small; ties keep index order, so the plan is
 * deterministic. A rollout over the budget gets a micro-batch of its own rather
 * than being dropped. `include[i]` false leaves rollout i out.
 */
export function planMicroBatches(batch: RolloutBatch, tokenBudget: number, include?: ArrayLike<boolean>): number[][] {
  if (!(tokenBudget > 0))
    throw new CoreError('invalid_config', `tokenBudget must be positive, got ${tokenBudget}`, { field: 'tokenBudget' });
  const len = (i: number) =>
    batch.promptOffsets[i + 1]! - batch.promptOffsets[i]! + batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
  const idx: number[] = [];
  for (let i = 0; i < batch.numRollouts; i++) if (include === undefined || include[i]) idx.push(i);
  idx.sort((a, b) => len(a) - len(b) || a - b);
  const out: number[][] = [];
  let cur: number[] = [];
  let maxP = 0;
  let maxC = 0;
  for (const i of idx) {
    const pl = batch.promptOffsets[i + 1]! - batch.promptOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
    if (cur.length > 0 && (cur.length + 1) * (Math.max(maxP, pl) + Math.max(maxC, cl)) > tokenBudget) {
      out.push(cur);
      cur = [];
      maxP = 0;
      maxC = 0;
    }
    cur.push(i);
    maxP = Math.max(maxP, pl);
    maxC = Math.max(maxC, cl);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Rollouts laid out for a decoder: prompts left-padded to P, completions
 * right-padded to C, so that completion token j of every row sits at column
 * P + j and is predicted by the hidden state at column P - 1 + j.
 * Row-major arrays: n rows, S = P + C columns.
 */
export interface PackedRollouts {
  /** rollout index (in the batch) of each row */
  rollouts: number[];
  n: number;
  P: number;
  C: number;
  S: number;
  /** `[n, S]` token ids (`padId` where masked) */
  ids: Int32Array;
  /** `[n, S]` 1 for real tokens */
  attentionMask: Float32Array;
  /** `[n, C]` 1 for real completion tokens */
  completionMask: Float32Array;
}

/** Lay out rollouts `rows` of the batch (see `PackedRollouts`). */
export function packRollouts(batch: RolloutBatch, rows: readonly number[], padId = 0): PackedRollouts {
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
    ids.set(batch.completionTokens.subarray(c0, c0 + cl), r * S + P);
    attentionMask.fill(1, r * S + P - pl, r * S + P + cl);
    completionMask.fill(1, r * C, r * C + cl);
  });
  return { rollouts: [...rows], n, P, C, S, ids, attentionMask, completionMask };
}

/** A per-token array of the batch (`[totalTokens]`) in the packed layout `[n, C]` (0 in padding). */
export function gatherPacked(batch: RolloutBatch, packed: PackedRollouts, perToken: ArrayLike<number>): Float32Array {
  const out = new Float32Array(packed.n * packed.C);
  packed.rollouts.forEach((i, r) => {
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    for (let t = 0; t < cl; t++) out[r * packed.C + t] = perToken[c0 + t]!;
  });
  return out;
}

/** The inverse of `gatherPacked`: write packed `[n, C]` values into `out[totalTokens]`. */
export function scatterPacked(batch: RolloutBatch, packed: PackedRollouts, values: ArrayLike<number>, out: Float32Array): void {
  packed.rollouts.forEach((i, r) => {
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    for (let t = 0; t < cl; t++) out[c0 + t] = values[r * packed.C + t]!;
  });
}
