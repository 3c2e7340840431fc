import { composeEstimator, defineMethod, grpo, uniform, type AdvantageEstimator } from '@rlvr/advantages';
import { z } from 'zod';
import { gateDegenerate } from './gate.js';

/** The per-rollout signal of process scores: `[B, 2K]` (token end, score) pairs per rollout, -1-padded (`stepSignal`). */
export const PROCESS_STEPS = 'process.steps';

const base = composeEstimator(grpo, uniform, 'grpo');

/**
 * `verigate`: verifier-gated step-level GRPO. Groups whose rewards differ (by more than `degenerateTol`) get
 * GRPO's advantages, bit for bit; degenerate groups get step advantages from process scores
 * (`gateDegenerate`, in the order `stepOrder`), with GRPO's std convention (`bessel`). Reads `process.steps`.
 */
export const verigateEstimator: AdvantageEstimator = defineMethod({
  name: 'verigate',
  description: 'GRPO where a group is decided by the verifier; process-score step advantages in degenerate groups (VeriGate)',
  configSchema: z.strictObject({
    ...base.configSchema.shape,
    /** added to the std of a degenerate group's step values (`bessel` picks the std, as for GRPO's) */
    stepEps: z.number().positive().default(1e-6),
    /**
     * a degenerate group's step advantages: `cumulate-normalize` (the abstract's order: future-cumulated step
     * scores, then group-normalised) or `normalize-sum` (DeepSeekMath's process-supervised GRPO: group-normalised
     * step scores, then summed over the future steps)
     */
    stepOrder: z.enum(['cumulate-normalize', 'normalize-sum']).default('cumulate-normalize'),
    /** a group is degenerate when max - min of its rewards is at most this (0: all equal, as 0/1 rewards need) */
    degenerateTol: z.number().nonnegative().default(0),
  }),
  needs: [PROCESS_STEPS],
  batchCoupled: (c) => (base.batchCoupled as (c: unknown) => boolean)(c),
  compute({ batch, signals, config }, out) {
    const { stepEps, stepOrder, degenerateTol, ...grpoConfig } = config;
    const grpoOptions = base.configSchema.parse(grpoConfig);
    const a = base.estimate(batch, signals, grpoOptions);
    out.set(a.advantages);
    const { values, width } = signals.getPerRollout(PROCESS_STEPS, 'estimator verigate');
    const gated = gateDegenerate(
      batch,
      values,
      width,
      {
        order: stepOrder as 'cumulate-normalize' | 'normalize-sum',
        bessel: (grpoOptions as { bessel: boolean }).bessel,
        eps: stepEps as number,
        tol: degenerateTol as number,
      },
      out,
    );
    return { metrics: { ...a.metrics, verigate_degenerate_groups: gated } };
  },
});
