import { RlvrError } from '@rlvr/core';

/** Every way a trainer operation can fail. Closed union: callers may switch on it. */
export type TrainerErrorCode =
  | 'invalid_config'
  | 'checkpoint_missing'
  | 'checkpoint_corrupt'
  | 'checkpoint_config_mismatch'
  /** a parameter or optimizer state turned NaN or infinite: the checkpoint is not saved */
  | 'non_finite'
  | 'invalid_input';

/** The one error class of `@rlvr/trainer`: a stable `code`, core's `location` (rollout, field, file) printed before the message. */
export class TrainerError extends RlvrError<TrainerErrorCode> {
  override readonly name = 'TrainerError';
}
