import { RlvrError } from '@rlvr/core';

/**
 * Every way a caller can misuse `@rlvr/math-verify`. Closed union: callers may switch on it.
 * - `invalid_options`: options that fail the schema (the message names each field);
 * - `invalid_input`: a completion, gold or answer that is not a string (`location.index` for a batch item);
 * - `invalid_row`: parallel arrays of different lengths;
 * - `pool_closed`: a call on (or pending in) a closed `VerifierPool`.
 */
export type MathVerifyErrorCode = 'invalid_options' | 'invalid_input' | 'invalid_row' | 'pool_closed';

/** The one error class of this package, on core's base: `code` is stable, `location` (core's `ErrorLocation`) is printed before the message. */
export class MathVerifyError extends RlvrError<MathVerifyErrorCode> {
  override readonly name = 'MathVerifyError';
}

/** Refuses a non-string argument up front (a worker would otherwise die on it), naming the argument and the batch item. */
export function assertText(value: unknown, field: string, index?: number): asserts value is string {
  if (typeof value === 'string') return;
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
  throw new MathVerifyError('invalid_input', `must be a string (got ${got})`, index === undefined ? { field } : { index, field });
}
