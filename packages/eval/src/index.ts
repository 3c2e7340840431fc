export { EvaluationError } from './errors.js';
export type { EvaluationErrorCode } from './errors.js';
export { passAtK, meanPassAtK } from './pass-at-k.js';
export { scoreDataset, averageScores } from './score.js';
export type { SampleOutcome, EvalMetrics, DatasetScore } from './score.js';
export { evaluateProblems, SampleFailure } from './evaluate.js';
export type { EvalProblem, EvaluateOptions, EvaluateResult } from './evaluate.js';
export { heldOutEval, greedyEval } from './held-out.js';
export type { HeldOutTask, HeldOutOptions, HeldOutResult, GreedyEval } from './held-out.js';
// the presets live in @rlvr/tasks (one set of names); re-exported while callers move their imports there
export { PRESET_ALIASES as EVAL_PRESETS, resolvePreset, guessPreset } from '@rlvr/tasks';
export { EvalOptionsSchema, parseEvalOptions, datasetNames, DEFAULT_MAX_QUESTION_CHARS } from './options.js';
export type { EvalOptions, EvalOptionsInput, EvalDataset, EvalDatasetInput } from './options.js';
export { runEval, problemSeed } from './run.js';
export type { EvalResult, EvalDatasetResult, EvalLogger, EvalProgress, EvalRunOptions } from './run.js';
export { DEFAULT_MAX_TOKENS, baseUrlOf } from './engines.js';
export type { EvalPolicy } from './engines.js';
export { formatEvalTable, formatEvalJson } from './table.js';
export { evalCommand, EVAL_USAGE } from './command.js';
