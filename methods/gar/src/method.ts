import { composeEstimator, defineMethod, drGrpo, grpo, uniform, type AdvantageEstimator } from '@rlvr/advantages';
import type { RolloutBatch } from '@rlvr/core';
import { z } from 'zod';

/**
 * The per-rollout signal: `[B]` cos(g_i, g*) of rollout i's output-projection gradient with its group's reference's.
 * Declared here, not beside the backend, so the estimator's module never loads tfjs.
 */
export const GAR_COSINE = 'gar.cosine';

const meanCentred = composeEstimator(drGrpo, uniform, 'dr-grpo');
const stdScaled = composeEstimator(grpo, uniform, 'grpo');

export const GarConfigSchema = z.strictObject({
  /** weight of the dense reward: r' = r + lambda * cos */
  lambda: z.number().nonnegative().default(0.1),
  /** which rollouts get the dense reward: all, only correct (reward > 0), only wrong */
  apply: z.enum(['all', 'correct', 'wrong']).default('all'),
  /** only reward alignment: max(cos, 0), so no rollout is pushed away from the reference */
  positiveOnly: z.boolean().default(false),
  /** the group normalisation of r': `mean` (Dr. GRPO, r' - mean) or `std` (GRPO, (r' - mean) / (std + stdEps)) */
  normalize: z.enum(['mean', 'std']).default('mean'),
  /** with `normalize: std`: Bessel's correction of the group std (GRPO's default) */
  bessel: z.boolean().default(true),
  /** with `normalize: std`: added to the std */
  stdEps: z.number().nonnegative().default(1e-6),
});
export type GarConfig = z.output<typeof GarConfigSchema>;
export type GarConfigInput = z.input<typeof GarConfigSchema>;

/**
 * `[B]` the shaped rewards r'_i = r_i + lambda * d_i (rounded once to float32), d_i = cos_i (or max(cos_i, 0)),
 * 0 for rollouts outside `apply`; and the mean dense term over the rollouts that got one.
 */
export function shapedRewards(
  batch: RolloutBatch,
  cos: Float32Array,
  config: GarConfig,
): { rewards: Float32Array<ArrayBuffer>; denseMean: number } {
  const rewards = new Float32Array(batch.numRollouts);
  let sum = 0;
  let n = 0;
  for (let i = 0; i < batch.numRollouts; i++) {
    const r = batch.rewards[i]!;
    const on = config.apply === 'all' || (config.apply === 'correct') === r > 0;
    const d = on ? (config.positiveOnly ? Math.max(0, cos[i]!) : cos[i]!) : 0;
    rewards[i] = r + config.lambda * d;
    if (on) {
      sum += config.lambda * d;
      n++;
    }
  }
  return { rewards, denseMean: n > 0 ? sum / n : 0 };
}

/**
 * `gar`: the Gradient-Aligned Reward. Each rollout's reward gets lambda x the cosine of its
 * output-projection gradient with its group's reference solution's (`gar.cosine`, from the `gar`
 * backend), before the group normalisation (Dr. GRPO's mean-centering by default, GRPO's std
 * scaling with `normalize: std`); the sequence advantage goes to every token. lambda = 0 gives
 * Dr. GRPO's (or GRPO's) advantages exactly.
 */
export const garEstimator: AdvantageEstimator = defineMethod({
  name: 'gar',
  description: 'Gradient-Aligned Reward: r + lambda cos(output-projection gradient, reference solution gradient), then Dr. GRPO',
  configSchema: GarConfigSchema,
  needs: [GAR_COSINE],
  batchCoupled: false,
  compute({ batch, signals, config }, out) {
    const cos = signals.getPerRollout(GAR_COSINE, 'estimator gar').values;
    const { rewards, denseMean } = shapedRewards(batch, cos, config);
    const shaped = { ...batch, rewards };
    const a =
      config.normalize === 'mean'
        ? meanCentred.estimate(shaped, signals, {})
        : stdScaled.estimate(shaped, signals, { bessel: config.bessel, stdEps: config.stdEps, scaleRewards: 'group' });
    out.set(a.advantages);
    let cosSum = 0;
    for (let i = 0; i < cos.length; i++) cosSum += cos[i]!;
    return {
      weights: a.weights,
      sequenceAdvantages: a.sequenceAdvantages,
      metrics: { ...a.metrics, gar_cos_mean: cos.length > 0 ? cosSum / cos.length : 0, gar_dense_mean: denseMean },
    };
  },
});
