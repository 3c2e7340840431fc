import { composeEstimator, defineMethod, drGrpo, grpo, uniform, type AdvantageEstimator } from '@rlvr/advantages';
import type { RolloutBatch } from '@rlvr/core';
import { z } from 'zod';

/**
 * The per-rollout signal: `[B]` the GAR cosine of rollout i's gradient vector with its group's anchors' (the
 * `gar` backend's `vector` and `anchors`).
 * Declared here, not beside the backend, so the estimator's module never loads tfjs.
 */
export const GAR_COSINE = 'gar.cosine';

const meanCentred = composeEstimator(drGrpo, uniform, 'dr-grpo');
const stdScaled = composeEstimator(grpo, uniform, 'grpo');

export const GarConfigSchema = z.strictObject({
  /** weight of the bonus: r' = r + beta * d (the authors' `gar_beta`, on their base reward of 1.0) */
  beta: z.number().nonnegative().default(0.5),
  /** which rollouts get the bonus: only correct (reward > 0; the authors' verifier gate), all, only wrong */
  apply: z.enum(['correct', 'all', 'wrong']).default('correct'),
  /**
   * the bonus d of a rollout with cosine c: `hinge` max(0, c - the mean c of the group's rollouts that get one, where
   * there are at least 2) (the authors' centred one-sided hinge), or `linear` c itself (uncentred)
   */
  bonus: z.enum(['hinge', 'linear']).default('hinge'),
  /** with `bonus: linear`: max(c, 0), so no rollout is pushed away from the reference */
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
 * `[B]` the shaped rewards r'_i = r_i + beta * d_i (rounded once to float32), 0 added to rollouts outside `apply`,
 * d_i = max(0, cos_i - m_g) with `bonus: hinge` (m_g the mean cosine of the rollouts of i's group inside `apply`,
 * 0 where there is only one: the authors' absolute cosine), cos_i (or max(cos_i, 0)) with `bonus: linear`; and the
 * mean bonus beta * d over the rollouts that got one.
 */
export function shapedRewards(
  batch: RolloutBatch,
  cos: Float32Array,
  config: GarConfig,
): { rewards: Float32Array<ArrayBuffer>; denseMean: number } {
  const B = batch.numRollouts;
  const on = (i: number) => config.apply === 'all' || (config.apply === 'correct') === batch.rewards[i]! > 0;
  // per group: sum and count of the cosines of its rollouts inside `apply`
  const sums = new Map<number, { sum: number; n: number }>();
  for (let i = 0; i < B; i++) {
    if (!on(i)) continue;
    const s = sums.get(batch.groupIndex[i]!) ?? { sum: 0, n: 0 };
    s.sum += cos[i]!;
    s.n++;
    sums.set(batch.groupIndex[i]!, s);
  }
  const rewards = new Float32Array(B);
  let sum = 0;
  let n = 0;
  for (let i = 0; i < B; i++) {
    const r = batch.rewards[i]!;
    if (!on(i)) {
      rewards[i] = r;
      continue;
    }
    let d: number;
    if (config.bonus === 'hinge') {
      const g = sums.get(batch.groupIndex[i]!)!;
      d = Math.max(0, cos[i]! - (g.n > 1 ? g.sum / g.n : 0));
    } else d = config.positiveOnly ? Math.max(0, cos[i]!) : cos[i]!;
    rewards[i] = r + config.beta * d;
    sum += config.beta * d;
    n++;
  }
  return { rewards, denseMean: n > 0 ? sum / n : 0 };
}

/**
 * `gar`: the Gradient-Aligned Reward. Each correct rollout's reward gets beta x max(0, its GAR cosine with
 * its group's anchors (`gar.cosine`, from the `gar` backend) minus the mean of its group's correct rollouts'),
 * as the authors' code; `apply` and `bonus` give the other readings. Then the group normalisation (Dr. GRPO's
 * mean-centering by default, GRPO's std scaling with `normalize: std`); the sequence advantage goes to every
 * token. beta = 0 gives Dr. GRPO's (or GRPO's) advantages exactly.
 */
export const garEstimator: AdvantageEstimator = defineMethod({
  name: 'gar',
  description: 'Gradient-Aligned Reward: r + beta max(0, cos - mean cos of the correct) for correct rollouts, then Dr. GRPO',
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
