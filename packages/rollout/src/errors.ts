import { formatLocation, type ErrorLocation } from '@rlvr/core';

/**
 * Every way `@rlvr/rollout` can fail. Closed union: callers may switch on it.
 * (Bad options fail earlier, with `@rlvr/core`'s `CoreError('invalid_config')`.)
 * - `invalid_row`: a dataset row or CLI input row lacks a field or has the wrong type;
 * - `invalid_file`: a file cannot be read or is not what it claims (bad JSON, bad vocabulary);
 * - `invalid_tokenizer`: a tokenizer SPEC names no known kind, or a token id has no bytes;
 * - `invalid_response`: a server or sampler broke the protocol (checked with zod / the sampler contract).
 * (A request that fails for good is not thrown: its rollouts are marked `error`.)
 */
export type RolloutErrorCode =
  | 'invalid_row'
  | 'invalid_file'
  | 'invalid_tokenizer'
  | 'invalid_response';

/** The one error class of `@rlvr/rollout`. `code` is stable; `message` is for people. */
export class RolloutError extends Error {
  override readonly name = 'RolloutError';
  readonly code: RolloutErrorCode;
  readonly location: ErrorLocation;

  constructor(code: RolloutErrorCode, message: string, location: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(formatLocation(location) + message, options);
    this.code = code;
    this.location = location;
  }
}
