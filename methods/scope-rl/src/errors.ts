import { RlvrError } from '@rlvr/core';

/**
 * - `invalid_scaffold`: a problem's scaffold does not parse, has one sub-answer too many or too few, or
 *   shows a sub-answer in the prompt (the message names the problem).
 */
export type ScopeRlErrorCode = 'invalid_scaffold';

/** The one error class of `@rlvr/scope-rl`. */
export class ScopeRlError extends RlvrError<ScopeRlErrorCode> {
  override readonly name = 'ScopeRlError';
}
