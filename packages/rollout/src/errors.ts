import { RlvrError } from '@rlvr/core';

/**
 * Every way `@rlvr/rollout` can fail. Closed union: callers may switch on it.
 * (Bad options fail earlier, with `@rlvr/core`'s `CoreError('invalid_config')`; JSONL files that cannot
 * be read, and outputs that cannot be written, with core's `read_failed` / `write_failed`.)
 * - `invalid_row`: a dataset row or CLI input row lacks a field or has the wrong type;
 * - `invalid_file`: a vocabulary file cannot be read or is not one;
 * - `invalid_tokenizer`: a tokenizer SPEC names no known kind, or a token id has no bytes;
 * - `invalid_response`: a server or sampler broke the protocol (checked with zod / the sampler contract);
 * - `listen_failed`: `rlvr-serve` could not bind its host and port.
 * (A request that fails for good is not thrown: its rollouts are marked `error`.)
 */
export type RolloutErrorCode = 'invalid_row' | 'invalid_file' | 'invalid_tokenizer' | 'invalid_response' | 'listen_failed';

/** The one error class of `@rlvr/rollout`. `code` is stable; `message` is for people; `location` is core's. */
export class RolloutError extends RlvrError<RolloutErrorCode> {
  override readonly name = 'RolloutError';
}
