import { formatLocation } from '@rlvr/core';
import type { ErrorLocation } from '@rlvr/core';

/** Every way a reference-trainer command can fail. Closed union: callers may switch on it. */
export type ReferenceTrainerErrorCode =
  /** A required file of the run directory (or the directory itself) does not exist. */
  | 'missing_file'
  /** A file exists but could not be read (permissions, I/O error). */
  | 'read_failed'
  /** A line of a run file is not JSON, or not a record of the documented shape. */
  | 'invalid_record'
  /** Options passed to a command are invalid (unknown flag, bad value). */
  | 'invalid_options'
  /** A config (file or flags) fails its schema: unknown keys, bad values. */
  | 'invalid_config'
  /** The output could not be written; nothing was left behind. */
  | 'write_failed';

/** The one error class of `@rlvr/reference-trainer`. `location` names file, line and field where known. */
export class ReferenceTrainerError extends Error {
  override readonly name = 'ReferenceTrainerError';
  readonly code: ReferenceTrainerErrorCode;
  readonly location: ErrorLocation;

  constructor(code: ReferenceTrainerErrorCode, message: string, location: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(formatLocation(location) + message, options);
    this.code = code;
    this.location = location;
  }
}
