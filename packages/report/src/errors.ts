import { RlvrError } from '@rlvr/core';

/** Every way reading a run directory or writing its report can fail. Closed union: callers may switch on it. */
export type ReportErrorCode =
  /** The run directory, or its `metrics.jsonl`, does not exist. */
  | 'missing_file'
  /** A line of a run file is not a record of the documented shape, or `config.json` is not a JSON object. */
  | 'invalid_record'
  /** `metrics.jsonl` holds no record: there is nothing to report. */
  | 'no_metrics'
  /** Report options are invalid (a bad value, an unknown key). */
  | 'invalid_options'
  /** The credit metrics' input is inconsistent (array lengths, a label outside its completion, a duplicate method). */
  | 'invalid_input';

/**
 * The one error class of `@rlvr/report`; `location` names the file, line and field where known.
 * Files that cannot be read or written at all throw core's `CoreError` (`read_failed`, `write_failed`).
 */
export class ReportError extends RlvrError<ReportErrorCode> {
  override readonly name = 'ReportError';
}
