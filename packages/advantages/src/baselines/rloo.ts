import { z } from 'zod';
import type { SequenceBaseline } from '../types.js';
import { baselineMetrics, rewardGroups } from './groups.js';

export const RlooConfigSchema = z.strictObject({});
export type RlooConfig = z.output<typeof RlooConfigSchema>;

/**
 * RLOO (Ahmadian et al. 2024, arXiv:2402.14740): the baseline of rollout i is the
 * mean of the other rollouts of its group, A_i = r_i - mean_{j != i} r_j
 * = n/(n-1) (r_i - mean_g). Groups of one get A = 0 (like verl's `rloo_vectorized`;
 * verl's loop version keeps r_i).
 */
export const rloo: SequenceBaseline<typeof RlooConfigSchema> = {
  name: 'rloo',
  description: 'leave-one-out: r - mean of the other rollouts of the group',
  configSchema: RlooConfigSchema,
  batchCoupled: false,
  compute(batch, _config, out) {
    const groups = rewardGroups(batch, false);
    for (let i = 0; i < batch.numRollouts; i++) {
      const g = batch.groupIndex[i]!;
      const n = groups.count[g]!;
      out[i] = groups.degenerate[g] ? 0 : (n / (n - 1)) * (batch.rewards[i]! - groups.mean[g]!);
    }
    return baselineMetrics(groups, batch);
  },
};
