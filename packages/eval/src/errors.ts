import { RlvrError } from '@rlvr/core';

/** Every way an evaluation can fail. Closed union: callers may switch on it. */
export type EvaluationErrorCode =
  /** A dataset file or the model directory does not exist. */
  | 'missing_file'
  /** A dataset row lacks a field, has one of the wrong type, or holds a question too long to evaluate. */
  | 'invalid_record'
  /** The options do not fit together or do not fit the model (a prompt longer than its context). */
  | 'invalid_options'
  /** The model directory exists but cannot be loaded. */
  | 'load_failed'
  /** The server cannot be reached, or does not answer as an OpenAI-compatible one. */
  | 'server_error'
  /** A sample failed for good (a server error after retries, a decoding failure): the evaluation cannot be complete. */
  | 'sampling_failed';

/** The one error class of `@rlvr/eval`; `location` names the file, line (of a dataset row) or field where known. */
export class EvaluationError extends RlvrError<EvaluationErrorCode> {
  override readonly name = 'EvaluationError';
}
