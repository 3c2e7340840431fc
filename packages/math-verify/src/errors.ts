/** Every way a caller can misuse `@rlvr/math-verify`. Closed union: callers may switch on it. */
export type MathVerifyErrorCode = 'invalid_options' | 'invalid_row' | 'pool_closed';

/** Where an error happened, when known: the input file and 1-based line (CLI), or the batch index. */
export interface MathVerifyErrorLocation {
  file?: string;
  line?: number;
  index?: number;
}

/** The one error class of this package. `code` is stable; `message` names what and where. */
export class MathVerifyError extends Error {
  override readonly name = 'MathVerifyError';
  readonly code: MathVerifyErrorCode;
  readonly location: MathVerifyErrorLocation;

  constructor(code: MathVerifyErrorCode, message: string, location: MathVerifyErrorLocation = {}, options?: { cause?: unknown }) {
    const where = [
      location.file !== undefined ? (location.line !== undefined ? `${location.file}:${location.line}` : location.file) : location.line !== undefined ? `line ${location.line}` : '',
      location.index !== undefined ? `item ${location.index}` : '',
    ]
      .filter((s) => s.length > 0)
      .join(', ');
    super((where ? `${where}: ` : '') + message, options);
    this.code = code;
    this.location = location;
  }
}
