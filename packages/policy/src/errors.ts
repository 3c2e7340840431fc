/** Every way `@rlvr/policy` can refuse its input. Closed union: callers may switch on it. */
export type PolicyErrorCode =
  | 'invalid_config'
  | 'unsupported_config'
  | 'invalid_checkpoint'
  | 'missing_tensor'
  | 'shape_mismatch'
  | 'invalid_input'
  | 'invalid_tokenizer'
  | 'backend_unavailable';

/** Where an error happened, when that is known. Printed in the message as well. */
export interface PolicyErrorLocation {
  file?: string;
  /** 1-based line of `file` (JSONL inputs). */
  line?: number;
  /** Tensor name (Hugging Face naming). */
  tensor?: string;
  /** Row of a batch (0-based). */
  row?: number;
}

/** The one error class of `@rlvr/policy`. `code` is stable; `message` is for people. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  readonly code: PolicyErrorCode;
  readonly location: PolicyErrorLocation;

  constructor(code: PolicyErrorCode, message: string, location: PolicyErrorLocation = {}, options?: { cause?: unknown }) {
    super(prefix(location) + message, options);
    this.code = code;
    this.location = location;
  }
}

function prefix(loc: PolicyErrorLocation): string {
  const parts: string[] = [];
  if (loc.file !== undefined) parts.push(loc.line !== undefined ? `${loc.file}:${loc.line}` : loc.file);
  if (loc.row !== undefined) parts.push(`row ${loc.row}`);
  if (loc.tensor !== undefined) parts.push(`tensor ${loc.tensor}`);
  return parts.length > 0 ? parts.join(', ') + ': ' : '';
}
