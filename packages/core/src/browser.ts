/**
 * `@rlvr/core` for a browser (the package's `browser` export condition): every export but those that need
 * Node (files, JSON lines, config files, the CLI layout, HTTP draining, status lines). `index.ts` adds those.
 */
export { RlvrError, CoreError, isRlvrError, formatLocation, usageError } from './errors.js';
export type { CoreErrorCode, ErrorLocation } from './errors.js';
export { parseConfig, formatZodIssues } from './config.js';
export { configJsonSchema } from './json-schema.js';
export type { JsonSchema } from './json-schema.js';
export { jsonDepthExceeded, previewValue } from './json-limits.js';
export type { DepthExceeded } from './json-limits.js';
export { didYouMean, nearestName } from './suggest.js';
export { applyOverrides, parseWithOverrides } from './overrides.js';
export type { DottedOverride } from './overrides.js';
export {
  FinishReasonSchema,
  FINISH_CODES,
  FINISH_REASONS,
  TokenRangeSchema,
  AnswerSpansSchema,
  SPAN_STRIDE,
  SPAN,
  RolloutBatchSchema,
  totalTokens,
  completionLength,
  numGroups,
  getSpans,
  setSpans,
  hasAnswer,
  referenceOf,
} from './batch.js';
export type { FinishReason, TokenRange, AnswerSpans, RolloutBatch } from './batch.js';
export { validateBatch } from './validate.js';
export { RolloutRowSchema, batchFromRows, batchToRows, takeRollouts } from './rows.js';
export type { RolloutRow, RolloutRowInput } from './rows.js';
export { bindRolloutStage, checkResamples, replaceGroups } from './rollout-stage.js';
export type { BoundRolloutStage, GroupResample, JsonValue, ProblemAux, RolloutStage, ScoredGroup } from './rollout-stage.js';
export { groupStats, segmentSum, segmentMean, segmentMeanStd, broadcastSegments } from './segments.js';
export type { GroupStats } from './segments.js';
export { Signals, SIGNAL_NAMES } from './signals.js';
export type { SignalName, SignalShape, RolloutSignal } from './signals.js';
export { Registry } from './registry.js';
export { Rng, stepSeed } from './rng.js';
export { planMicroBatches, packRollouts, gatherPacked, scatterPacked } from './layout.js';
export type { PackedRollouts } from './layout.js';
export { silentLogger, streamLogger } from './logger.js';
export type { Logger } from './logger.js';
export { findBoxes, answerBoxes, joinsBoxes, finalBoxUnclosed } from './boxes.js';
export { answerStart, DEFAULT_THINK_TAGS } from './think.js';
export type { ThinkTags } from './think.js';
export {
  SpanOptionsSchema,
  spanLocator,
  locateAnswerSpans,
  fillBatchSpans,
  tokensBytes,
  tokenPieces,
  tokenizerJsonBytes,
} from './answer-spans.js';
export type { TokenBytes, SpanOptions, SpanOptionsInput, SpanLocator } from './answer-spans.js';
export type { Box, BoxChoice, FindBoxesOptions } from './boxes.js';
export {
  METRIC,
  METRIC_FAMILY,
  ESTIMATOR_METRIC,
  WEIGHT_OUTCOMES,
  WEIGHT_STATS,
  inMetricFamily,
  weightMetric,
  estimatorWeightKey,
  estimatorMetricName,
  estimatorMetrics,
  passAtMetric,
  passAtMetricN,
} from './metrics.js';
export type { MetricName, WeightOutcome, WeightStat } from './metrics.js';
export { textTable, percent, plural } from './text-table.js';
