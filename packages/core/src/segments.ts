/**
 * Reductions over groups and over ragged token segments. They allocate one
 * output per group or per segment, never per token, and accumulate in float64.
 */

/** Per-group statistics of a per-rollout value. */
export interface GroupStats {
  /** [numGroups] members per group */
  count: Int32Array;
  /** [numGroups] mean (0 for an empty group) */
  mean: Float64Array;
  /** [numGroups] standard deviation (0 for groups too small to have one) */
  std: Float64Array;
}

/**
 * Mean and standard deviation of `values[B]` per group (`groupIndex[B]`, ids < numGroups).
 * `unbiased` divides by n - 1 (Bessel's correction; a group of one then has std 0),
 * otherwise by n. Two passes, so large offsets do not cancel precision.
 */
export function groupStats(values: ArrayLike<number>, groupIndex: Int32Array, numGroups: number, unbiased = false): GroupStats {
  const count = new Int32Array(numGroups);
  const mean = new Float64Array(numGroups);
  const std = new Float64Array(numGroups);
  for (let i = 0; i < groupIndex.length; i++) {
    const g = groupIndex[i]!;
    count[g]!++;
    mean[g]! += values[i]!;
  }
  for (let g = 0; g < numGroups; g++) if (count[g]! > 0) mean[g]! /= count[g]!;
  for (let i = 0; i < groupIndex.length; i++) {
    const g = groupIndex[i]!;
    const d = values[i]! - mean[g]!;
    std[g]! += d * d;
  }
  for (let g = 0; g < numGroups; g++) {
    const denom = unbiased ? count[g]! - 1 : count[g]!;
    std[g] = denom > 0 ? Math.sqrt(std[g]! / denom) : 0;
  }
  return { count, mean, std };
}

/** Sum of `values[offsets[i] .. offsets[i+1])` for each segment i. [offsets.length - 1] */
export function segmentSum(values: ArrayLike<number>, offsets: Int32Array): Float64Array {
  const n = offsets.length - 1;
  const out = new Float64Array(Math.max(n, 0));
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let t = offsets[i]!; t < offsets[i + 1]!; t++) s += values[t]!;
    out[i] = s;
  }
  return out;
}

/** Mean of each segment; an empty segment has mean 0. [offsets.length - 1] */
export function segmentMean(values: ArrayLike<number>, offsets: Int32Array): Float64Array {
  const out = segmentSum(values, offsets);
  for (let i = 0; i < out.length; i++) {
    const len = offsets[i + 1]! - offsets[i]!;
    out[i] = len > 0 ? out[i]! / len : 0;
  }
  return out;
}

/** Population mean and std of each segment (std 0 for segments shorter than 2). */
export function segmentMeanStd(values: ArrayLike<number>, offsets: Int32Array): { mean: Float64Array; std: Float64Array } {
  const mean = segmentMean(values, offsets);
  const std = new Float64Array(mean.length);
  for (let i = 0; i < mean.length; i++) {
    const len = offsets[i + 1]! - offsets[i]!;
    let ss = 0;
    for (let t = offsets[i]!; t < offsets[i + 1]!; t++) {
      const d = values[t]! - mean[i]!;
      ss += d * d;
    }
    std[i] = len > 0 ? Math.sqrt(ss / len) : 0;
  }
  return { mean, std };
}

/** Write `value[i]` into every token of segment i of `out` (a broadcast, in place). */
export function broadcastSegments(value: ArrayLike<number>, offsets: Int32Array, out: Float32Array): Float32Array {
  for (let i = 0; i < offsets.length - 1; i++) out.fill(value[i]!, offsets[i]!, offsets[i + 1]!);
  return out;
}
