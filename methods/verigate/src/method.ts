import { composeEstimator, defineMethod, grpo, uniform, type AdvantageEstimator } from '@rlvr/advantages';
import { z } from 'zod';
import { gateDegenerate } from './gate.js';

/** The per-rollout signal of process scores: `[B, 2K]` (token end, score) pairs per rollout, -1-padded (`stepSignal`). */
export const PROCESS_STEPS = 'process.steps';

const base = composeEstimator(grpo, uniform, 'grpo');

/**
 * `verigate`: verifier-gated step-level GRPO. Groups whose rewards differ get GRPO's advantages,
 * bit for bit; degenerate groups (all rewards equal) get step advantages from process scores
 * (`gateDegenerate`). Reads `process.steps`.
 */
export const verigateEstimator: AdvantageEstimator = defineMethod({
  name: 'verigate',
  description: 'GRPO where a group is decided by the verifier; process-score step advantages in degenerate groups (VeriGate)',
  configSchema: z.strictObject({
    ...base.configSchema.shape,
    /** added to the std of a degenerate group's continuation rewards */
    stepEps: z.number().positive().default(1e-6),
  }),
  needs: [PROCESS_STEPS],
  batchCoupled: (c) => (base.batchCoupled as (c: unknown) => boolean)(c),
  compute({ batch, signals, config }, out) {
    const { stepEps, ...grpoConfig } = config;
    const a = base.estimate(batch, signals, base.configSchema.parse(grpoConfig));
    out.set(a.advantages);
    const { values, width } = signals.getPerRollout(PROCESS_STEPS, 'estimator verigate');
    const gated = gateDegenerate(batch, values, width, stepEps as number, out);
    return { metrics: { ...a.metrics, verigate_degenerate_groups: gated } };
  },
});
