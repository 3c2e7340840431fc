/**
 * `@rlvr/trainer` for a browser (the package's `browser` export condition): every export but the checkpoint
 * store and the config hash (files, `node:crypto`). `index.ts` adds those.
 */
export { clippedSurrogate } from './surrogate.js';
export type { SurrogateOptions, SurrogateTerms } from './surrogate.js';
export { aggregate, aggregationScale, AggregationModeSchema } from './aggregate.js';
export type { AggregationMode, AggregationScale } from './aggregate.js';
export { klPenalty, KlEstimatorSchema } from './kl.js';
export type { KlEstimator } from './kl.js';
export { stopGradient } from './stop-gradient.js';
export { AdamW, AdamWConfigSchema, clipGradNorm } from './adamw.js';
export type { AdamWConfig } from './adamw.js';
export { learningRate, LrScheduleSchema } from './schedule.js';
export type { LrSchedule } from './schedule.js';
export { TrainerError } from './errors.js';
export type { TrainerErrorCode } from './errors.js';
export { selectRollouts, batchMetrics } from './batch-filters.js';
export type { RolloutSelection } from './batch-filters.js';
export { Trainer } from './trainer.js';
export { syncSeconds } from './data-parallel.js';
export type { AdvantageInput, StepOptions, StepResult } from './trainer.js';
export { resolveRefresh } from './refresh.js';
export type { AdvantageRefresh, RefreshContext, RefreshEvery, RefreshFactory, RefreshSpec } from './refresh.js';
export { TrainerConfigSchema } from './config.js';
export type { TrainerConfig, TrainerConfigInput } from './config.js';
export { packSft, sftLoss, sftStep } from './sft.js';
export type { SftRow, PackedSft, SftStepResult } from './sft.js';
