/** Every way `@rlvr/saliency` can refuse its input. Closed union: callers may switch on it. */
export type SaliencyErrorCode = 'invalid_config' | 'invalid_input' | 'invalid_scores' | 'missing_model';

/** Where an error happened, when that is known. Printed in the message as well. */
export interface SaliencyErrorLocation {
  /** Rollout index in the batch (0-based). */
  rollout?: number;
  /** Field name (`spans`, `scores.3`). */
  field?: string;
  /** File path, for errors raised while reading a file. */
  file?: string;
  /** 1-based line of `file`. */
  line?: number;
}

/** The one error class of `@rlvr/saliency`. `code` is stable; `message` is for people. */
export class SaliencyError extends Error {
  override readonly name = 'SaliencyError';
  readonly code: SaliencyErrorCode;
  readonly location: SaliencyErrorLocation;
  /** The message without its location prefix. */
  readonly detail: string;

  constructor(code: SaliencyErrorCode, message: string, location: SaliencyErrorLocation = {}, options?: { cause?: unknown }) {
    super(prefix(location) + message, options);
    this.code = code;
    this.location = location;
    this.detail = message;
  }
}

function prefix(loc: SaliencyErrorLocation): string {
  const parts: string[] = [];
  if (loc.file !== undefined) parts.push(loc.line !== undefined ? `${loc.file}:${loc.line}` : loc.file);
  else if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.rollout !== undefined) parts.push(`rollout ${loc.rollout}`);
  if (loc.field !== undefined) parts.push(`field ${loc.field}`);
  return parts.length > 0 ? parts.join(', ') + ': ' : '';
}
