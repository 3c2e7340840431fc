/**
 * Token-weight statistics for the report, split by whether the rollout was
 * correct: the distribution of weights, and the mean weight against relative
 * position in the completion (the "U-shape" figure of the GRAIL paper).
 */
import type { SampleRecord } from './run-dir.js';

/** Which rollouts a statistic is about. */
export type Outcome = 'correct' | 'wrong';
export const OUTCOMES: readonly Outcome[] = ['correct', 'wrong'];

/** Token counts per weight bin. `edges` has `bins + 1` entries; bin i is `[edges[i], edges[i+1])`, the last one closed. */
export interface WeightHistogram {
  edges: number[];
  counts: Record<Outcome, number[]>;
  /** Tokens per outcome (the sum of its counts). */
  totals: Record<Outcome, number>;
}

/**
 * Histogram of every token weight in `samples`, with common bins over
 * `[min, max]` of all weights so the two outcomes are comparable.
 * `null` when there are no tokens at all.
 */
export function weightHistogram(samples: readonly SampleRecord[], bins: number): WeightHistogram | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of samples) {
    for (const w of s.weights) {
      if (w < lo) lo = w;
      if (w > hi) hi = w;
    }
  }
  if (lo > hi) return null;
  // All weights equal (e.g. uniform GRPO weights): one visible bar centred on the value.
  if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const width = (hi - lo) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, i) => (i === bins ? hi : lo + i * width));
  const counts: Record<Outcome, number[]> = { correct: new Array<number>(bins).fill(0), wrong: new Array<number>(bins).fill(0) };
  const totals: Record<Outcome, number> = { correct: 0, wrong: 0 };
  for (const s of samples) {
    const outcome: Outcome = s.correct ? 'correct' : 'wrong';
    const row = counts[outcome];
    for (const w of s.weights) {
      const b = Math.min(bins - 1, Math.floor((w - lo) / width));
      row[b]!++;
    }
    totals[outcome] += s.weights.length;
  }
  return { edges, counts, totals };
}

/** Mean weight of one outcome in one position bin; `null` stats when no rollout has a token there. */
export interface PositionStat {
  /** Mean over rollouts of each rollout's mean weight in this bin. */
  mean: number | null;
  /** Standard error of that mean (sample std / sqrt(n)); `null` for fewer than 2 rollouts. */
  sem: number | null;
  /** Rollouts with at least one token in this bin. */
  rollouts: number;
  /** Tokens in this bin over all those rollouts. */
  tokens: number;
}

/** One bin of relative position `t / len`: `[lo, hi)`. */
export interface PositionBin {
  bin: number;
  lo: number;
  hi: number;
  stats: Record<Outcome, PositionStat>;
}

/**
 * Mean token weight against relative position in the completion.
 *
 * Token t of a completion of `len` tokens has relative position `t / len` in
 * [0, 1) and falls in bin `floor(t * bins / len)`. Each rollout first averages
 * its own weights per bin; the bin's value is the mean of those per-rollout
 * means over rollouts of that outcome, so a long completion counts once, like a short one.
 */
export function positionProfile(samples: readonly SampleRecord[], bins: number): PositionBin[] {
  // Per outcome and bin: sum and sum of squares of per-rollout means, rollout and token counts.
  const acc = Object.fromEntries(
    OUTCOMES.map((o) => [
      o,
      { sum: new Float64Array(bins), sq: new Float64Array(bins), n: new Int32Array(bins), tokens: new Int32Array(bins) },
    ]),
  ) as Record<Outcome, { sum: Float64Array; sq: Float64Array; n: Int32Array; tokens: Int32Array }>;
  const binSum = new Float64Array(bins);
  const binCount = new Int32Array(bins);
  for (const s of samples) {
    const len = s.weights.length;
    if (len === 0) continue;
    binSum.fill(0);
    binCount.fill(0);
    for (let t = 0; t < len; t++) {
      const b = Math.floor((t * bins) / len);
      binSum[b]! += s.weights[t]!;
      binCount[b]!++;
    }
    const a = acc[s.correct ? 'correct' : 'wrong'];
    for (let b = 0; b < bins; b++) {
      if (binCount[b] === 0) continue;
      const m = binSum[b]! / binCount[b]!;
      a.sum[b]! += m;
      a.sq[b]! += m * m;
      a.n[b]!++;
      a.tokens[b]! += binCount[b]!;
    }
  }
  return Array.from({ length: bins }, (_, b) => ({
    bin: b,
    lo: b / bins,
    hi: (b + 1) / bins,
    stats: Object.fromEntries(
      OUTCOMES.map((o) => {
        const { sum, sq, n, tokens } = acc[o];
        const k = n[b]!;
        const mean = k > 0 ? sum[b]! / k : null;
        // Unbiased sample variance of the per-rollout means; clamp tiny negative round-off.
        const variance = k > 1 ? Math.max(0, (sq[b]! - k * mean! * mean!) / (k - 1)) : null;
        const sem = variance === null ? null : Math.sqrt(variance / k);
        return [o, { mean, sem, rollouts: k, tokens: tokens[b]! }];
      }),
    ) as Record<Outcome, PositionStat>,
  }));
}
