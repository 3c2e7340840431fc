import { RlvrError } from '@rlvr/core';

/** Every way `@rlvr/saliency` can refuse its input. Closed union: callers may switch on it. */
export type SaliencyErrorCode = 'invalid_config' | 'invalid_input' | 'invalid_scores' | 'missing_model';

/** The one error class of `@rlvr/saliency`: a stable `code`, core's `location` (rollout, field, file, line) printed before the message. */
export class SaliencyError extends RlvrError<SaliencyErrorCode> {
  override readonly name = 'SaliencyError';
}
