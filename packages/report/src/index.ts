export { ReportError } from './errors.js';
export type { ReportErrorCode } from './errors.js';
export {
  RUN_FILES,
  RunConfigSchema,
  MetricsRecordSchema,
  SampleRecordSchema,
  EvalRecordSchema,
  CheckpointWeightRecordSchema,
  readRunDir,
  readRecords,
  parseRecord,
  checkCheckpointTask,
} from './run-dir.js';
export type { RunConfig, MetricsRecord, SampleRecord, EvalRecord, CheckpointWeightRecord, RunData } from './run-dir.js';
export { reasoningProfiles } from './checkpoint-stats.js';
export type { CheckpointProfile, ReasoningBin } from './checkpoint-stats.js';
export { ReportOptionsSchema, parseReportOptions } from './options.js';
export type { ReportOptions, ReportOptionsResolved } from './options.js';
export { renderReport, writeReport } from './report.js';
export type { RenderedReport, ReportResult } from './report.js';
export { reportCommand, REPORT_USAGE } from './command.js';
export { headlineRows, headlineLines } from './headline.js';
export type { HeadlineRow } from './headline.js';
export { pairedDifference } from './paired-difference.js';
export type { PairedDifference } from './paired-difference.js';
export { formatLearning, learningCheck } from './learning.js';
export type { LearningCheck } from './learning.js';
export { weightHistogram, positionProfile } from './weight-stats.js';
export type { Outcome, WeightHistogram, PositionBin, PositionStat } from './weight-stats.js';
export { COMPARE_FILE, DEFAULT_THRESHOLD, meanStd, parseThreshold, stepsToThreshold, summarize, thresholdFor } from './compare-stats.js';
export type { CompareRun, CompareEval, CompareRow, CompareTable, MeanStd, Threshold } from './compare-stats.js';
export { formatCompare, formatContrast, formatMeanStd } from './compare-format.js';
export { sampleRecords } from './sample-records.js';
export type { SampleAdvantages } from './sample-records.js';
export { ALPHA, compareContrasts, POWER_DELTAS } from './compare-contrasts.js';
export type { Contrast } from './compare-contrasts.js';
export { sequentialDecision, sequentialLooks } from './sequential.js';
export type { SequentialDecision } from './sequential.js';
export { holm, pairedPower, pairedT, pairsForPower, welch, wilcoxonExact, wilcoxonNormal } from './tests.js';
export type { PairedT, Welch } from './tests.js';
export { noncentralTCdf, normalCdf, normalQuantile, studentTCdf, studentTQuantile, studentTwoSided } from './distributions.js';
export { creditMap } from './credit/credit-map.js';
export type { CreditMapInput, MethodCredit } from './credit/credit-map.js';
export { CreditOptionsSchema, CreditRolloutSchema, FirstErrorSchema } from './credit/input.js';
export type { CreditInput, CreditLabel, CreditOptions, CreditRollout, RolloutStatus } from './credit/input.js';
export { creditMetrics } from './credit/metrics.js';
export { creditLabel, creditOfEstimates } from './credit/estimates.js';
export { formatCreditTable } from './credit/table.js';
export type { EstimatesInput, EstimatorOutput, TokenLabel } from './credit/estimates.js';
export { CreditReportSchema } from './credit/schema.js';
export type { CreditReport, Estimate, MethodMetrics, PairedDifference as CreditPairedDifference } from './credit/schema.js';
export { readCreditJson, writeCreditJson } from './credit/json.js';
export { renderCreditPage, writeCreditPage } from './credit/page.js';
export type { CreditPageOptions } from './credit/page.js';
export { clearRunLogs, recordedSteps, repairRunLogs } from './run-logs.js';
export type { RecordedSteps } from './run-logs.js';
export { CompareOptionsSchema, compareOptionsProblem } from './compare-options.js';
export type { CompareOptions, CompareOptionsInput } from './compare-options.js';
export { VariantSchema, parseVariants, variantError, variantInput } from './compare-variants.js';
export type { Variant } from './compare-variants.js';
export { TUNE_SEED_BASE, TuneRecordSchema, formatTune, maxWidenFlag, nextRate, rateLabel, tuneFlag, tuneRates } from './compare-tune.js';
export { tuneRecord, tuneRow, tuneSeedsFlag } from './compare-tune.js';
export type { TunePoint, TuneRecord, TuneRow, TuneSettings } from './compare-tune.js';
export { firstSeeds, listFlag, looksFlag, primaryFlag, seedList, seedsFlag, thresholdFlag } from './compare-flags.js';
