/** Every way a trainer operation can fail. Closed union: callers may switch on it. */
export type TrainerErrorCode = 'invalid_config' | 'checkpoint_missing' | 'checkpoint_corrupt' | 'checkpoint_config_mismatch' | 'invalid_input';

/** The one error class of `@rlvr/trainer`. */
export class TrainerError extends Error {
  override readonly name = 'TrainerError';
  readonly code: TrainerErrorCode;

  constructor(code: TrainerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
