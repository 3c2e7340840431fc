/**
 * `@rlvr/advantages` for a browser (the package's `browser` export condition): every export but the CLI
 * command, which reads files and streams. `index.ts` adds it.
 */
export { AdvantagesError } from './errors.js';
export type { AdvantagesErrorCode } from './errors.js';
export type {
  AdvantageEstimator,
  AdvantageMethod,
  AdvantageResult,
  ConfigSchema,
  EstimatorState,
  MethodInput,
  MethodOutput,
  Metrics,
  SequenceBaseline,
  TokenWeighting,
} from './types.js';
export { defineMethod } from './method.js';
export { encodeState, decodeState } from './state.js';
export { composeEstimator, mergeConfigSchemas } from './compose.js';
export {
  baselines,
  weightings,
  estimators,
  getEstimator,
  hasEstimator,
  knownNames,
  registerBaseline,
  registerWeighting,
  registerEstimator,
} from './registry.js';
export { prepareEstimator, estimateAdvantages } from './prepare.js';
export type {
  BaselineSchemas,
  WeightingSchemas,
  EstimatorSchemas,
  MergedSchema,
  KnownEstimatorName,
  SchemaOf,
  EstimatorOptions,
  EstimatorConfig,
} from './option-types.js';
export type { PreparedEstimator } from './prepare.js';
export { grpo, GrpoConfigSchema } from './baselines/grpo.js';
export type { GrpoConfig } from './baselines/grpo.js';
export { drGrpo, DrGrpoConfigSchema } from './baselines/dr-grpo.js';
export type { DrGrpoConfig } from './baselines/dr-grpo.js';
export { rloo, RlooConfigSchema } from './baselines/rloo.js';
export type { RlooConfig } from './baselines/rloo.js';
export { reinforcePpBaseline, ReinforcePpBaselineConfigSchema } from './baselines/reinforce-pp-baseline.js';
export type { ReinforcePpBaselineConfig } from './baselines/reinforce-pp-baseline.js';
export { uniform, UniformConfigSchema } from './weightings/uniform.js';
export { grail, GrailConfigSchema } from './weightings/grail.js';
export type { GrailConfig } from './weightings/grail.js';
export { oarG, OarGConfigSchema } from './weightings/oar-g.js';
export type { OarGConfig } from './weightings/oar-g.js';
export { InteropRowSchema, interopBatch, interopRowProblem } from './interop.js';
export { formatFloat32, formatFloat32Array } from './cli/format.js';
export { optionsFromText } from './cli/text-options.js';
export type { InteropRow } from './interop.js';
export { noSignalReason } from './no-signal.js';
