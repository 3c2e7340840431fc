import { formatLocation, type ErrorLocation } from '@rlvr/core';

/**
 * Every way `@rlvr/advantages` rejects its input. Closed union: callers may switch on it.
 * Configuration and registry errors come from `@rlvr/core` helpers as `CoreError`
 * (`invalid_config`, `unknown_name`, `name_taken`, `missing_signal`).
 */
export type AdvantagesErrorCode =
  /** a signal value the arithmetic cannot use (NaN, infinite, negative score) */
  | 'invalid_signal'
  /** the batch and the signals do not fit together */
  | 'invalid_input'
  /** a composed estimator's baseline and weighting declare the same option */
  | 'config_clash'
  /** a CLI input line is not a valid row (the location names file and line) */
  | 'invalid_line'
  /** a CLI flag or argument is malformed */
  | 'invalid_argument';

/** The one error class of `@rlvr/advantages`. `code` is stable; `message` is for people. */
export class AdvantagesError extends Error {
  override readonly name = 'AdvantagesError';
  readonly code: AdvantagesErrorCode;
  readonly location: ErrorLocation;

  constructor(code: AdvantagesErrorCode, message: string, location: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(formatLocation(location) + message, options);
    this.code = code;
    this.location = location;
  }
}
