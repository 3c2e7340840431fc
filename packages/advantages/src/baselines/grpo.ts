import { z } from 'zod';
import type { SequenceBaseline } from '../types.js';
import { baselineMetrics, rewardGroups } from './groups.js';

export const GrpoConfigSchema = z.strictObject({
  /** divide the squared deviations by n - 1 (torch.std, verl, TRL) instead of n */
  bessel: z.boolean().default(true),
  /** added to the group std before dividing: verl 1e-6, TRL 1e-4 */
  stdEps: z.number().nonnegative().default(1e-6),
});
export type GrpoConfig = z.output<typeof GrpoConfigSchema>;

/**
 * GRPO (Shao et al. 2024, arXiv:2402.03300): A_i = (r_i - mean_g) / (std_g + stdEps).
 * Groups of one and groups with equal rewards get A = 0 (verl gives a singleton r_i).
 */
export const grpo: SequenceBaseline<typeof GrpoConfigSchema> = {
  name: 'grpo',
  description: 'group mean and std: (r - mean) / (std + eps), std with or without Bessel',
  configSchema: GrpoConfigSchema,
  batchCoupled: false,
  compute(batch, config, out) {
    const groups = rewardGroups(batch, config.bessel);
    for (let i = 0; i < batch.numRollouts; i++) {
      const g = batch.groupIndex[i]!;
      out[i] = groups.degenerate[g] ? 0 : (batch.rewards[i]! - groups.mean[g]!) / (groups.std[g]! + config.stdEps);
    }
    return baselineMetrics(groups, batch);
  },
};
