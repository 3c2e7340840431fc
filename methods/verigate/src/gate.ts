import { AdvantagesError } from '@rlvr/advantages';
import type { RolloutBatch } from '@rlvr/core';

/** How a degenerate group's step scores become step advantages. */
export interface StepOptions {
  /**
   * `cumulate-normalize` (the abstract's order): R[i,k] = sum_{j >= k} s[i,j], then (R - mean) / (std + eps) over
   * all the group's steps; `normalize-sum` (DeepSeekMath's process-supervised GRPO): s~ = (s - mean) / (std + eps)
   * over all the group's step scores, then sum_{j >= k} s~[i,j]
   */
  order: 'cumulate-normalize' | 'normalize-sum';
  /** the std with Bessel's correction (n - 1), as GRPO's branch with its `bessel`; false: the population std (n) */
  bessel: boolean;
  /** added to the std */
  eps: number;
  /** a group is degenerate when max - min of its rewards is at most this (0: all rewards equal) */
  tol: number;
}

/** (x - mean) / (std + eps) of every value, in float64; the std by `bessel`. `x` has at least 2 values. */
function standardise(x: readonly number[], bessel: boolean, eps: number): number[] {
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  const std = Math.sqrt(x.reduce((a, b) => a + (b - mean) ** 2, 0) / (bessel ? x.length - 1 : x.length));
  return x.map((v) => (v - mean) / (std + eps));
}

/** Each row's sums from the end: out[k] = sum_{j >= k} x[j]. */
const suffixSums = (x: readonly number[]): number[] => {
  const out = new Array<number>(x.length);
  for (let k = x.length - 1, acc = 0; k >= 0; k--) out[k] = acc += x[k]!;
  return out;
};

/** Rollout i's steps from `steps` (`[B, width]`: (token end, score) pairs, -1-padded), checked against its length. */
function stepsOf(batch: RolloutBatch, steps: Float32Array, K: number, i: number): { ends: number[]; scores: number[] } {
  const len = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
  const ends: number[] = [];
  const scores: number[] = [];
  for (let k = 0; k < K && steps[(i * K + k) * 2]! >= 0; k++) {
    const end = steps[(i * K + k) * 2]!;
    if (end > len || (ends.length > 0 && end < ends[ends.length - 1]!))
      throw new AdvantagesError(
        'invalid_signal',
        `process.steps: step ${k} ends at token ${end}, outside 0..${len} or before the previous step`,
        {
          rollout: i,
          field: 'process.steps',
        },
      );
    ends.push(end);
    scores.push(steps[(i * K + k) * 2 + 1]!);
  }
  return { ends, scores };
}

/**
 * VeriGate's degenerate-group step advantages. For each group whose rewards are all equal (max - min at most
 * `tol`: all right or all wrong, where GRPO gives 0), rollout i's step k gets a value from the process scores
 * s[i,j] of the group's steps, in the `order` given (see `StepOptions`), and every token of step k gets it; tokens
 * after a rollout's last step get 0, as does a group with under 2 steps. Other groups' tokens are left as they are
 * in `out`. `steps` is `[B, width]`: (token end, score) pairs, -1-padded. Returns the number of groups it wrote.
 * Computed in float64, rounded once to float32.
 */
export function gateDegenerate(batch: RolloutBatch, steps: Float32Array, width: number, options: StepOptions, out: Float32Array): number {
  const o = batch.completionOffsets;
  const K = width / 2;
  const byGroup = new Map<number, number[]>();
  for (let i = 0; i < batch.numRollouts; i++) {
    const g = batch.groupIndex[i]!;
    byGroup.set(g, [...(byGroup.get(g) ?? []), i]);
  }
  let written = 0;
  for (const rows of byGroup.values()) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const i of rows) {
      lo = Math.min(lo, batch.rewards[i]!);
      hi = Math.max(hi, batch.rewards[i]!);
    }
    if (!(hi - lo <= options.tol)) continue;
    written++;
    const parsed = rows.map((i) => stepsOf(batch, steps, K, i));
    const total = parsed.reduce((n, p) => n + p.scores.length, 0);
    // per rollout, the value of each step
    let values: number[][];
    if (total < 2) values = parsed.map((p) => p.scores.map(() => 0));
    else if (options.order === 'cumulate-normalize') {
      const cumulated = parsed.map((p) => suffixSums(p.scores));
      const z = standardise(cumulated.flat(), options.bessel, options.eps);
      values = cumulated.map((c) => z.splice(0, c.length));
    } else {
      const z = standardise(
        parsed.flatMap((p) => p.scores),
        options.bessel,
        options.eps,
      );
      values = parsed.map((p) => suffixSums(z.splice(0, p.scores.length)));
    }
    rows.forEach((i, n) => {
      out.fill(0, o[i]!, o[i + 1]!);
      let start = 0;
      parsed[n]!.ends.forEach((end, k) => {
        out.fill(values[n]![k]!, o[i]! + start, o[i]! + end);
        start = end;
      });
    });
  }
  return written;
}
