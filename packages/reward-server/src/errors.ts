/**
 * Every way a request (or the server's own configuration) is refused. Closed union: callers may switch on it.
 * Each code maps to one HTTP status (`statusOf`), and the JSON error body carries the code and the message.
 */
export type RewardServerErrorCode =
  /** the server's options are invalid (startup only) */
  | 'invalid_options'
  /** the body is not JSON (or a JSONL line is not) */
  | 'invalid_json'
  /** the JSON is well-formed but not what the route takes (a missing field, a wrong type, a bad row) */
  | 'invalid_request'
  /** `query`, `prompts` and `labels` have different lengths */
  | 'length_mismatch'
  /** the body is larger than `maxBodyBytes` */
  | 'body_too_large'
  /** estimator name or options the advantage route cannot use */
  | 'invalid_estimator'
  | 'not_found'
  | 'method_not_allowed'
  /** the server is draining for shutdown */
  | 'shutting_down'
  /** `maxInFlight` requests are being handled already; retry shortly (`Retry-After`) or on another replica */
  | 'overloaded'
  /** the server could not listen (port taken, address not available) */
  | 'listen_failed'
  /** a bug: the request was fine but the server failed; the message says what threw */
  | 'internal';

/** Where in the request the problem is, when known. */
export interface RewardServerErrorLocation {
  /** JSON field (dotted for nested ones: `rows.3.saliency`). */
  field?: string;
  /** Index in the request's arrays, or the row index of `/advantages`. */
  index?: number;
  /** 1-based line of a JSONL body. */
  line?: number;
}

const STATUS: Record<RewardServerErrorCode, number> = {
  invalid_options: 500,
  invalid_json: 400,
  invalid_request: 400,
  length_mismatch: 400,
  body_too_large: 413,
  invalid_estimator: 400,
  not_found: 404,
  method_not_allowed: 405,
  shutting_down: 503,
  overloaded: 503,
  listen_failed: 500,
  internal: 500,
};

/** The one error class of `@rlvr/reward-server`. `code` is stable; `message` is for people. */
export class RewardServerError extends Error {
  override readonly name = 'RewardServerError';
  readonly code: RewardServerErrorCode;
  readonly location: RewardServerErrorLocation;

  constructor(code: RewardServerErrorCode, message: string, location: RewardServerErrorLocation = {}, options?: { cause?: unknown }) {
    const where = [
      location.line !== undefined ? `line ${location.line}` : '',
      location.index !== undefined ? `item ${location.index}` : '',
      location.field !== undefined ? `field ${location.field}` : '',
    ]
      .filter((s) => s.length > 0)
      .join(', ');
    super((where ? `${where}: ` : '') + message, options);
    this.code = code;
    this.location = location;
  }

  /** The HTTP status this error is answered with. */
  get status(): number {
    return STATUS[this.code];
  }

  /** The JSON error body: `{"error": {"code", "message", "field"?, "index"?, "line"?}}`. */
  toJSON(): { error: { code: RewardServerErrorCode; message: string } & RewardServerErrorLocation } {
    return { error: { code: this.code, message: this.message, ...this.location } };
  }
}

/** A value as it may appear in an error message: JSON, cut at `max` characters; never throws (cycles, deep nesting). */
export function preview(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? 'a deeply nested array' : typeof value === 'object' && value !== null ? 'a deeply nested object' : String(value);
  }
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
