import { z } from 'zod';
import { AggregationModeSchema } from './aggregate.js';
import { KlEstimatorSchema } from './kl.js';
import { AdamWConfigSchema } from './adamw.js';
import { LrScheduleSchema } from './schedule.js';

/**
 * Everything one update needs to know. Defaults follow the GRAIL reference setup
 * (clip 0.2 / 0.28, Dr. GRPO's constant normaliser, no KL, grad-norm 1).
 */
export const TrainerConfigSchema = z
  .object({
    clipLow: z.number().min(0).lt(1).default(0.2),
    clipHigh: z.number().min(0).default(0.28),
    /** dual-clip constant c > 1 for negative advantages; null disables */
    dualClip: z.number().gt(1).nullable().default(null),
    logRatioClamp: z.number().positive().default(20),
    aggregation: AggregationModeSchema.default('constant'),
    /** divisor of `constant` aggregation; default rollouts x maxCompletionLength (rollouts: `lossConstantRows`) */
    lossConstant: z.number().positive().optional(),
    /**
     * The rollouts of `constant`'s default divisor, per optimizer step: `kept` (ours) those it
     * trains on, after `maskTruncated` / `filterZeroStd`; `all` (TRL's `dr_grpo`, the GRAIL
     * reference) every rollout of the batch, excluded ones included, / `miniBatches`.
     */
    lossConstantRows: z.enum(['kept', 'all']).default('kept'),
    /** max completion length for `constant` (e.g. the sampler's maxNewTokens); default the batch's longest */
    maxCompletionLength: z.number().int().positive().optional(),
    klCoef: z.number().min(0).default(0),
    klEstimator: KlEstimatorSchema.default('k3'),
    entropyCoef: z.number().min(0).default(0),
    maskTruncated: z.boolean().default(false),
    filterZeroStd: z.boolean().default(false),
    /** optimisation passes over one rollout batch (PPO epochs; `num_iterations` in TRL) */
    epochs: z.number().int().positive().default(1),
    /** optimizer steps per pass: the rollouts are split into this many mini-batches */
    miniBatches: z.number().int().positive().default(1),
    /** padded tokens per micro-batch (rows x (prompt + completion)); gradients accumulate across micro-batches */
    tokenBudget: z.number().int().positive().default(8192),
    /** global gradient-norm clip; null disables */
    maxGradNorm: z.number().positive().nullable().default(1),
    /**
     * Divide the logits by this before the softmax, for the new, the recomputed old and the
     * reference log-probs alike (verl's actor `temperature`): the sampling temperature. Old
     * log-probs a caller passes must be at the same temperature, or the ratio is not 1 at the old
     * parameters.
     */
    temperature: z.number().positive().default(1),
    /** `recompute`: old log-probs from the policy at the start of the step; `behavior`: the sampler's */
    oldLogprobs: z.enum(['recompute', 'behavior']).default('recompute'),
    optimizer: AdamWConfigSchema.default(AdamWConfigSchema.parse({})),
    schedule: LrScheduleSchema.default(LrScheduleSchema.parse({})),
    /** seeds the mini-batch shuffling */
    seed: z.number().int().default(0),
  })
  .strict();
export type TrainerConfig = z.output<typeof TrainerConfigSchema>;
export type TrainerConfigInput = z.input<typeof TrainerConfigSchema>;
