import { RlvrError } from '@rlvr/core';

/**
 * Every way `@rlvr/advantages` rejects its input. Closed union: callers may switch on it.
 * The location (`rollout`, `field`, `file`, `line`) is core's `ErrorLocation`, printed before the message.
 */
export type AdvantagesErrorCode =
  /** estimator options that do not parse: the message names every bad field and the allowed values */
  | 'invalid_config'
  /** no estimator, baseline or weighting of that name; the message lists the known ones */
  | 'unknown_name'
  /** registering another implementation under a taken name */
  | 'name_taken'
  /** the estimator needs a signal the caller did not give; the message lists the available ones */
  | 'missing_signal'
  /** a signal value the arithmetic cannot use (NaN, infinite, negative score) */
  | 'invalid_signal'
  /** the batch and the signals do not fit together */
  | 'invalid_input'
  /** a composed estimator's baseline and weighting declare the same option */
  | 'config_clash'
  /** a CLI input line is not a valid row (the location names file and line) */
  | 'invalid_line';

/** The one error class of `@rlvr/advantages`. `code` is stable; `message` is for people. */
export class AdvantagesError extends RlvrError<AdvantagesErrorCode> {
  override readonly name = 'AdvantagesError';
}
