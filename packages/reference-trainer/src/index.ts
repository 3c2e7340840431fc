export { RLVR_COMMANDS } from './commands.js';
export { trainCommand } from './train/command.js';
export { compareCommand } from './compare/command.js';
export { pretrainCommand } from './pretrain/command.js';
export { ReferenceTrainerError } from './errors.js';
export type { ReferenceTrainerErrorCode } from './errors.js';
export { PretrainConfigSchema, PretrainModelSchema, PretrainEvalSchema, parsePretrainConfig } from './pretrain/config.js';
export type { PretrainConfig, PretrainConfigInput } from './pretrain/config.js';
export { runPretrain, CHECKPOINT_DIR } from './pretrain/run.js';
export type { PretrainLogger, PretrainSummary } from './pretrain/run.js';
export {
  TrainConfigSchema,
  TrainRunConfigSchema,
  TrainRolloutSchema,
  TrainEvalSchema,
  TrainDataSchema,
  parseTrainConfig,
  EMBEDDED_CHECKPOINT,
  HELD_OUT_SEED,
} from './train/config.js';
export type { TrainConfig, TrainConfigInput, TrainRunConfig } from './train/config.js';
export { runTrain } from './train/run.js';
export { TRAIN_DIRS } from './train/open.js';
export type { TrainLogger, TrainProgress, TrainSummary } from './train/run.js';
export { loadPlugins, PLUGIN_API } from './train/plugins.js';
export { SignalRefresh, SignalRefreshOptionsSchema, signalRefresh } from './train/refresh.js';
export type { SignalRefreshOptions } from './train/refresh.js';
export type { PluginApi } from './train/plugins.js';
export { runCompare } from './compare/run.js';
export { CompareOptionsSchema } from '@rlvr/report';
export { COMPARE_FILE } from '@rlvr/report';
export type { CompareResult, CompareLogger, CompareProgress } from './compare/run.js';
export type { CompareOptions, CompareOptionsInput } from '@rlvr/report';
export type { CompareRun, CompareEval, CompareRow, CompareTable, Contrast, MeanStd, Threshold } from '@rlvr/report';
export { CONFIG_SCHEMA_FILES, configJsonSchemas } from './config-schema.js';
