export { ReferenceTrainerError } from './errors.js';
export type { ReferenceTrainerErrorCode } from './errors.js';
export { RUN_FILES, RunConfigSchema, MetricsRecordSchema, SampleRecordSchema, readRunDir, readJsonl, parseRecord } from './run-dir.js';
export type { RunConfig, MetricsRecord, SampleRecord, RunData } from './run-dir.js';
export { ReportOptionsSchema, parseReportOptions, renderReport, writeReport } from './report.js';
export type { ReportOptions, RenderedReport, ReportResult } from './report.js';
export { weightHistogram, positionProfile } from './weight-stats.js';
export type { Outcome, WeightHistogram, PositionBin, PositionStat } from './weight-stats.js';
export { writeFileAtomic } from './atomic-write.js';
