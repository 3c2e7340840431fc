/** Every way a core contract can be violated. Closed union: callers may switch on it. */
export type CoreErrorCode =
  | 'invalid_batch'
  | 'invalid_row'
  | 'invalid_config'
  | 'invalid_signal'
  | 'missing_signal'
  /** a computation needs a rollout's reference solution and the batch has none for it */
  | 'missing_reference'
  /** a method's rollout stage asked to re-sample a group twice in one step, or one not in the step */
  | 'invalid_resample'
  | 'unknown_name'
  | 'name_taken'
  /** a file could not be read, or is not what it claims (bad JSON line) */
  | 'read_failed'
  /** a file could not be written; nothing was left behind */
  | 'write_failed'
  /** a command line flag or argument is malformed (CLIs exit 2 on it) */
  | 'usage';

/** Where an error happened, when that is known. Printed in the message as well. Shared by every rlvr package. */
export interface ErrorLocation {
  /** File path, for errors raised while reading or writing a file. */
  file?: string;
  /** 1-based line number in `file` (or in a request body). */
  line?: number;
  /** Rollout index in the batch (0-based). */
  rollout?: number;
  /** Index of an item in a list the caller gave (0-based): a batch of answers, a request array. */
  index?: number;
  /** Row of a tensor batch (0-based). */
  row?: number;
  /** Tensor name (Hugging Face naming). */
  tensor?: string;
  /** Field name, dotted for nested fields (`spans.content`), or a flag (`--steps`). */
  field?: string;
}

const BRAND = Symbol.for('rlvr.error');

/**
 * The base of every rlvr package's error class: a stable `code` (each package narrows it to its own closed
 * union), a `location` printed before the message, and the `cause`. CLIs print `message` as one line.
 */
export class RlvrError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly location: ErrorLocation;

  constructor(code: Code, message: string, location: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(formatLocation(location) + message, options);
    this.code = code;
    this.location = location;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for an error of any rlvr package, even when two copies of `@rlvr/core` are loaded. */
export function isRlvrError(e: unknown): e is RlvrError {
  return e instanceof RlvrError || (typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true);
}

/** The one error class of `@rlvr/core`. `code` is stable; `message` is for people. */
export class CoreError extends RlvrError<CoreErrorCode> {
  override readonly name = 'CoreError';
}

/** A usage error (a CLI exits 2 on it): names the flag when given. */
export function usageError(message: string, flag?: string): CoreError {
  return new CoreError('usage', message, flag === undefined ? {} : { field: flag.startsWith('-') ? flag : `--${flag}` });
}

/** `file:line: rollout 3, field rewards: ` — only the parts that are known. */
export function formatLocation(loc: ErrorLocation): string {
  const parts: string[] = [];
  if (loc.file !== undefined) parts.push(loc.line !== undefined ? `${loc.file}:${loc.line}` : loc.file);
  else if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.rollout !== undefined) parts.push(`rollout ${loc.rollout}`);
  if (loc.index !== undefined) parts.push(`item ${loc.index}`);
  if (loc.row !== undefined) parts.push(`row ${loc.row}`);
  if (loc.tensor !== undefined) parts.push(`tensor ${loc.tensor}`);
  if (loc.field !== undefined) parts.push(loc.field.startsWith('-') ? loc.field : `field ${loc.field}`);
  return parts.length > 0 ? parts.join(', ') + ': ' : '';
}
