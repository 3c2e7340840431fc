import { z } from 'zod';
import { ESTIMATOR_METRIC as M } from '@rlvr/core';
import type { SequenceBaseline } from '../types.js';
import { baselineMetrics, rewardGroups } from './groups.js';

export const ReinforcePpBaselineConfigSchema = z.strictObject({
  /** added to the batch variance inside the square root (verl: 1e-8) */
  whitenEps: z.number().positive().default(1e-8),
  /**
   * Rollouts of degenerate groups (one rollout, or equal rewards): `exclude` gives them A = 0 and
   * leaves them out of the whitening statistics; `whiten` is verl's `reinforce_plus_plus_baseline`:
   * they enter the statistics with x = 0 (equal rewards) or x = r (a group of one: verl's mean 0)
   * and are whitened like the others.
   */
  degenerateGroups: z.enum(['exclude', 'whiten']).default('exclude'),
});
export type ReinforcePpBaselineConfig = z.output<typeof ReinforcePpBaselineConfigSchema>;

/**
 * REINFORCE++-baseline (Hu et al. 2025, arXiv:2501.03262; verl
 * `reinforce_plus_plus_baseline`): x_i = r_i - mean_g, then whitening over every
 * completion token of the batch, so longer completions weigh more:
 *   N = sum_i len_i,  mu = sum_i len_i x_i / N,
 *   var = sum_i len_i (x_i - mu)^2 / (N - 1),  A_i = (x_i - mu) / sqrt(var + whitenEps).
 * With `degenerateGroups: exclude` (default), rollouts of groups of one or with equal
 * rewards get A = 0 and are left out of the sums (verl keeps them in, which shifts them
 * to -mu / sigma: a signal from a group that has none); `whiten` does as verl.
 */
export const reinforcePpBaseline: SequenceBaseline<typeof ReinforcePpBaselineConfigSchema> = {
  name: 'reinforce-pp-baseline',
  description: 'group mean, then whitening over all completion tokens of the batch',
  configSchema: ReinforcePpBaselineConfigSchema,
  batchCoupled: true,
  compute(batch, config, out) {
    const groups = rewardGroups(batch, false);
    const keepDegenerate = config.degenerateGroups === 'whiten';
    const offsets = batch.completionOffsets;
    // [B] 1 where the rollout enters the whitening
    const kept = new Uint8Array(batch.numRollouts);
    let n = 0;
    let sum = 0;
    for (let i = 0; i < batch.numRollouts; i++) {
      const g = batch.groupIndex[i]!;
      out[i] = 0;
      if (groups.degenerate[g] && !keepDegenerate) continue;
      // verl's mean of a group of one is 0, so its x is r; equal rewards give x = 0 exactly
      const x = groups.count[g] === 1 ? batch.rewards[i]! : batch.rewards[i]! - groups.mean[g]!;
      const len = offsets[i + 1]! - offsets[i]!;
      out[i] = x;
      kept[i] = 1;
      n += len;
      sum += len * x;
    }
    const mu = n > 0 ? sum / n : 0;
    let ss = 0;
    for (let i = 0; i < batch.numRollouts; i++) {
      if (!kept[i]) continue;
      const d = out[i]! - mu;
      ss += (offsets[i + 1]! - offsets[i]!) * d * d;
    }
    const variance = n > 1 ? ss / (n - 1) : 0;
    const inv = 1 / Math.sqrt(variance + config.whitenEps);
    for (let i = 0; i < batch.numRollouts; i++) if (kept[i]) out[i] = (out[i]! - mu) * inv;
    return { ...baselineMetrics(groups, batch), [M.whitenMean]: mu, [M.whitenStd]: Math.sqrt(variance) };
  },
};
