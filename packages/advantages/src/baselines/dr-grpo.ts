import { z } from 'zod';
import type { SequenceBaseline } from '../types.js';
import { baselineMetrics, rewardGroups } from './groups.js';

export const DrGrpoConfigSchema = z.strictObject({});
export type DrGrpoConfig = z.output<typeof DrGrpoConfigSchema>;

/**
 * Dr. GRPO (Liu et al. 2025, arXiv:2503.20783): A_i = r_i - mean_g, no std division.
 * (Its other half, a constant loss normaliser, is the trainer's aggregation mode.)
 * Groups of one and groups with equal rewards get A = 0.
 */
export const drGrpo: SequenceBaseline<typeof DrGrpoConfigSchema> = {
  name: 'dr-grpo',
  description: 'group mean only: r - mean (no std division)',
  configSchema: DrGrpoConfigSchema,
  batchCoupled: false,
  compute(batch, _config, out) {
    const groups = rewardGroups(batch, false);
    for (let i = 0; i < batch.numRollouts; i++) {
      const g = batch.groupIndex[i]!;
      out[i] = groups.degenerate[g] ? 0 : batch.rewards[i]! - groups.mean[g]!;
    }
    return baselineMetrics(groups, batch);
  },
};
