/** Every way a core contract can be violated. Closed union: callers may switch on it. */
export type CoreErrorCode =
  | 'invalid_batch'
  | 'invalid_row'
  | 'invalid_config'
  | 'invalid_signal'
  | 'missing_signal'
  | 'unknown_name'
  | 'name_taken';

/** Where an error happened, when that is known. Printed in the message as well. */
export interface ErrorLocation {
  /** Rollout index in the batch (0-based). */
  rollout?: number;
  /** Field name, dotted for nested fields (`spans.content`). */
  field?: string;
  /** File path, for errors raised while reading a file. */
  file?: string;
  /** 1-based line number in `file`. */
  line?: number;
}

/** The one error class of `@rlvr/core`. `code` is stable; `message` is for people. */
export class CoreError extends Error {
  override readonly name = 'CoreError';
  readonly code: CoreErrorCode;
  readonly location: ErrorLocation;

  constructor(code: CoreErrorCode, message: string, location: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(formatLocation(location) + message, options);
    this.code = code;
    this.location = location;
  }
}

/** `file:line: rollout 3, field rewards: ` — only the parts that are known. */
export function formatLocation(loc: ErrorLocation): string {
  const parts: string[] = [];
  if (loc.file !== undefined) parts.push(loc.line !== undefined ? `${loc.file}:${loc.line}` : loc.file);
  else if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.rollout !== undefined) parts.push(`rollout ${loc.rollout}`);
  if (loc.field !== undefined) parts.push(`field ${loc.field}`);
  return parts.length > 0 ? parts.join(', ') + ': ' : '';
}
