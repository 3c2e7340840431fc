import { type RolloutBatch, FINISH_CODES, METRIC, groupStats, numGroups } from '@rlvr/core';

/** Which rollouts enter the loss, and why the others do not. */
export interface RolloutSelection {
  /** [B] true for rollouts that enter the loss */
  include: boolean[];
  /** rollouts dropped because their completion was truncated (finish = length) */
  maskedTruncated: number;
  /** rollouts dropped because their group's rewards have zero spread */
  filteredZeroStd: number;
  /** groups whose rewards have zero spread (std below `zeroStdTolerance`) */
  zeroStdGroups: number;
  /** rollouts that failed to generate (finish = error): never trained on */
  errored: number;
}

/**
 * Select the rollouts to train on. Errored rollouts are always excluded; with
 * `maskTruncated`, truncated completions are too; with `filterZeroStd`, whole
 * groups whose rewards have zero spread (by standard deviation, not by mean) are
 * dropped, since their advantages are all zero under group baselines.
 */
export function selectRollouts(
  batch: RolloutBatch,
  opts: { maskTruncated: boolean; filterZeroStd: boolean; zeroStdTolerance?: number },
): RolloutSelection {
  const tol = opts.zeroStdTolerance ?? 1e-6;
  const G = numGroups(batch);
  const stats = groupStats(batch.rewards, batch.groupIndex, G, false);
  const zeroStd = new Uint8Array(G);
  let zeroStdGroups = 0;
  for (let g = 0; g < G; g++) {
    if (stats.count[g]! > 0 && stats.std[g]! <= tol) {
      zeroStd[g] = 1;
      zeroStdGroups++;
    }
  }
  const include: boolean[] = [];
  let maskedTruncated = 0;
  let filteredZeroStd = 0;
  let errored = 0;
  for (let i = 0; i < batch.numRollouts; i++) {
    let keep = true;
    if (batch.finish[i] === FINISH_CODES.error) {
      keep = false;
      errored++;
    } else if (opts.maskTruncated && batch.finish[i] === FINISH_CODES.length) {
      keep = false;
      maskedTruncated++;
    } else if (opts.filterZeroStd && zeroStd[batch.groupIndex[i]!]) {
      keep = false;
      filteredZeroStd++;
    }
    include.push(keep);
  }
  return { include, maskedTruncated, filteredZeroStd, zeroStdGroups, errored };
}

/**
 * Batch-level metrics with the names TRL and verl users know.
 * `frac_reward_zero_std` is the fraction of groups whose rewards have zero spread.
 */
export function batchMetrics(batch: RolloutBatch, zeroStdGroups: number): Record<string, number> {
  const n = batch.numRollouts;
  let sum = 0;
  let sq = 0;
  let lenSum = 0;
  let lenMin = Infinity;
  let lenMax = 0;
  let truncated = 0;
  for (let i = 0; i < n; i++) {
    const r = batch.rewards[i]!;
    sum += r;
    sq += r * r;
    const len = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
    lenSum += len;
    lenMin = Math.min(lenMin, len);
    lenMax = Math.max(lenMax, len);
    if (batch.finish[i] === FINISH_CODES.length) truncated++;
  }
  const mean = n > 0 ? sum / n : 0;
  const groups = numGroups(batch);
  return {
    [METRIC.rewardMean]: mean,
    [METRIC.rewardStd]: n > 1 ? Math.sqrt(Math.max(sq / n - mean * mean, 0) * (n / (n - 1))) : 0,
    [METRIC.fracRewardZeroStd]: groups > 0 ? zeroStdGroups / groups : 0,
    [METRIC.completionsMeanLength]: n > 0 ? lenSum / n : 0,
    [METRIC.completionsMinLength]: n > 0 ? lenMin : 0,
    [METRIC.completionsMaxLength]: lenMax,
    [METRIC.completionsClippedRatio]: n > 0 ? truncated / n : 0,
  };
}
