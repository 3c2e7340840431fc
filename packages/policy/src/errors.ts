import { RlvrError } from '@rlvr/core';

/** Every way `@rlvr/policy` can refuse its input. Closed union: callers may switch on it. */
export type PolicyErrorCode =
  | 'invalid_config'
  | 'unsupported_config'
  | 'invalid_checkpoint'
  /** a model directory could not be written (`exportModelDir`) */
  | 'write_failed'
  | 'missing_tensor'
  | 'shape_mismatch'
  | 'invalid_input'
  | 'invalid_tokenizer'
  | 'backend_unavailable'
  /** a policy worker threw or died; the engine is closed */
  | 'worker_failed'
  /** the worker engine was used after `close()` or while a run was in flight */
  | 'engine_closed'
  | 'engine_busy';

/** The one error class of `@rlvr/policy`: a stable `code`, core's `location` (file, line, row, tensor) printed before the message. */
export class PolicyError extends RlvrError<PolicyErrorCode> {
  override readonly name = 'PolicyError';
}
