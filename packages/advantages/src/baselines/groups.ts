import { ESTIMATOR_METRIC as M, groupStats, numGroups, type RolloutBatch } from '@rlvr/core';

/** Per-group reward statistics every baseline starts from. G = number of groups. */
export interface RewardGroups {
  /** [G] rollouts per group */
  count: Int32Array;
  /** [G] mean reward */
  mean: Float64Array;
  /** [G] reward std (Bessel-corrected when asked) */
  std: Float64Array;
  /**
   * [G] 1 where the group carries no learning signal: a single rollout, or all
   * rewards equal. Every baseline gives such rollouts advantage exactly 0.
   */
  degenerate: Uint8Array;
  /** Fraction of rollouts whose group is degenerate (TRL's `frac_reward_zero_std`). */
  fracZeroStd: number;
}

/**
 * Group statistics of the rewards. Equal rewards give std exactly 0 (the float64
 * mean of equal float32 values is exact), so "degenerate" needs no tolerance.
 */
export function rewardGroups(batch: RolloutBatch, unbiased: boolean): RewardGroups {
  const g = numGroups(batch);
  const { count, mean, std } = groupStats(batch.rewards, batch.groupIndex, g, unbiased);
  const degenerate = new Uint8Array(g);
  for (let k = 0; k < g; k++) degenerate[k] = count[k]! < 2 || std[k] === 0 ? 1 : 0;
  let zero = 0;
  for (let i = 0; i < batch.numRollouts; i++) zero += degenerate[batch.groupIndex[i]!]!;
  return { count, mean, std, degenerate, fracZeroStd: batch.numRollouts > 0 ? zero / batch.numRollouts : 0 };
}

/** Metrics every baseline reports. */
export function baselineMetrics(groups: RewardGroups, batch: RolloutBatch): Record<string, number> {
  let present = 0;
  for (let k = 0; k < groups.count.length; k++) if (groups.count[k]! > 0) present++;
  return { [M.numGroups]: present, [M.numRollouts]: batch.numRollouts, [M.fracRewardZeroStd]: groups.fracZeroStd };
}
