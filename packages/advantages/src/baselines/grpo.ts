import { z } from 'zod';
import { ESTIMATOR_METRIC as M } from '@rlvr/core';
import type { SequenceBaseline } from '../types.js';
import { baselineMetrics, rewardGroups } from './groups.js';

export const GrpoConfigSchema = z.strictObject({
  /** divide the squared deviations by n - 1 (torch.std, verl, TRL) instead of n */
  bessel: z.boolean().default(true),
  /** added to the std before dividing: verl 1e-6, TRL 1e-4 */
  stdEps: z.number().nonnegative().default(1e-6),
  /**
   * Whose std divides: the group's (`group`, the paper, verl, TRL's default) or the std of every
   * reward in the batch (`batch`, TRL's `scale_rewards: "batch"`); the mean is the group's either way.
   */
  scaleRewards: z.enum(['group', 'batch']).default('group'),
});
export type GrpoConfig = z.output<typeof GrpoConfigSchema>;

/**
 * GRPO (Shao et al. 2024, arXiv:2402.03300): A_i = (r_i - mean_g) / (std + stdEps), where std is
 * the group's (`scaleRewards: group`) or the batch's (`batch`: std over all B rewards, as TRL).
 * Groups of one and groups with equal rewards get A = 0 (verl gives a singleton r_i).
 */
export const grpo: SequenceBaseline<typeof GrpoConfigSchema> = {
  name: 'grpo',
  description: 'group mean and std: (r - mean) / (std + eps); std of the group or of the batch, with or without Bessel',
  configSchema: GrpoConfigSchema,
  batchCoupled: (config) => config.scaleRewards === 'batch',
  compute(batch, config, out) {
    const groups = rewardGroups(batch, config.bessel);
    const batchStd = config.scaleRewards === 'batch' ? rewardStd(batch.rewards, config.bessel) : 0;
    for (let i = 0; i < batch.numRollouts; i++) {
      const g = batch.groupIndex[i]!;
      const std = config.scaleRewards === 'batch' ? batchStd : groups.std[g]!;
      out[i] = groups.degenerate[g] ? 0 : (batch.rewards[i]! - groups.mean[g]!) / (std + config.stdEps);
    }
    return config.scaleRewards === 'batch'
      ? { ...baselineMetrics(groups, batch), [M.rewardStdBatch]: batchStd }
      : baselineMetrics(groups, batch);
  },
};

/** Std of all rewards [B] (two passes in float64; 0 for fewer than two). */
function rewardStd(rewards: Float32Array, bessel: boolean): number {
  const n = rewards.length;
  if (n < 2) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += rewards[i]!;
  const mean = sum / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (rewards[i]! - mean) ** 2;
  return Math.sqrt(ss / (bessel ? n - 1 : n));
}
