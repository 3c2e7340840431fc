import { RlvrError } from '@rlvr/core';

/** Every way a reference-trainer command can fail. Closed union: callers may switch on it. */
export type ReferenceTrainerErrorCode =
  /** A required file of the run directory (or the directory itself) does not exist. */
  | 'missing_file'
  /** A file exists but could not be read (permissions, I/O error). */
  | 'read_failed'
  /** A line of a run file is not JSON, or not a record of the documented shape. */
  | 'invalid_record'
  /** Options passed to a command are invalid (a run directory in the way, a foreign checkpoint). */
  | 'invalid_options'
  /** A config (file or flags) fails its schema: unknown keys, bad values. */
  | 'invalid_config'
  /** The output could not be written; nothing was left behind. */
  | 'write_failed'
  /** Training produced a NaN or infinity; no checkpoint holding it was saved. */
  | 'non_finite';

/** The one error class of `@rlvr/reference-trainer`; `location` (core's `ErrorLocation`) names file, line and field where known. */
export class ReferenceTrainerError extends RlvrError<ReferenceTrainerErrorCode> {
  override readonly name = 'ReferenceTrainerError';
}
