/**
 * `@rlvr/tasks`: verifiable tasks, in one place below the samplers and the evaluator. Dataset
 * presets and field mappings (JSONL rows to problems), the synthetic arithmetic generators with
 * the exact chain of every problem, the exact first-error labeller and answer-hidden scaffolds.
 * No TensorFlow.js, no tokenizer engine: token spans come from any `tokenBytes(id)`.
 */
export { TaskError } from './errors.js';
export type { TaskErrorCode } from './errors.js';

// datasets and presets
export { FieldMappingSchema, DatasetFormatSchema, resolveMapping, taskFromRow, readTasks, loadTasks } from './datasets.js';
export type { Task, FieldMapping, FieldMappingInput } from './datasets.js';
export { DATASET_PRESETS, PRESET_ALIASES, PresetNameSchema, resolvePreset, presetNamesText, guessPreset, presetLabel } from './presets.js';
export type { DatasetPreset, PresetName } from './presets.js';

// chains
export {
  CHAIN_OPERATIONS,
  OPERATION_SYMBOLS,
  ChainSchema,
  ChainStepSchema,
  parseChain,
  applyExact,
  chainValues,
  formatNumber,
  stepLine,
  chainSolution,
} from './chain.js';
export type { Chain, ChainStep, ChainOperation } from './chain.js';

// synthetic task families
export { SYNTHETIC_OPERATIONS, SyntheticOptionsSchema, syntheticGenerator, applyOperation } from './synthetic.js';
export type {
  SyntheticOperation,
  SyntheticOptions,
  SyntheticOptionsInput,
  SyntheticStep,
  SyntheticTask,
  SyntheticGenerator,
} from './synthetic.js';
export { LongChainOptionsSchema, longChainGenerator, renderChainTask } from './long-chain.js';
export type { LongChainOptions, LongChainOptionsInput, LongChainGenerator, ChainTask } from './long-chain.js';

// the first-error labeller
export { ERROR_KINDS, labelCompletion, labelTokens, tokenSpan } from './label.js';
export type { ErrorKind, LabelKind, FirstError, TokenFirstError, TokenBytesOf } from './label.js';

// the exact step labeller (SCOPE-RL's five categories)
export { STEP_LABELS, labelSteps } from './steps.js';
export type { StepLabel } from './steps.js';

// scaffolds
export { ScaffoldSchema, checkScaffold, scaffoldOf } from './scaffold.js';
export type { Scaffold } from './scaffold.js';

// the families by name
export { TASK_NAMES, TaskNameSchema, taskGenerator } from './families.js';
export type { TaskName, ChainTaskGenerator } from './families.js';
export { chainProblems, configChainSource } from './chain-tasks.js';
export type { ChainProblem, ChainSource } from './chain-tasks.js';
