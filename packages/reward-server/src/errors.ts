import { RlvrError, type ErrorLocation } from '@rlvr/core';

/**
 * Every way a request (or the server's own configuration) is refused. Closed union: callers may switch on it.
 * Each code maps to one HTTP status (`status`), and the JSON error body carries the code and the message.
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
  /** the body did not arrive whole within `bodyTimeoutMs` of the request's headers (a stalled or trickling client) */
  | 'body_timeout'
  /** `/advantages` rows that hold more tokens than `maxRowTokens` (one row) or `maxAdvantageTokens` (the request) */
  | 'too_many_tokens'
  /** estimator name or options the advantage route cannot use */
  | 'invalid_estimator'
  | 'not_found'
  | 'method_not_allowed'
  /** the server is draining for shutdown */
  | 'shutting_down'
  /**
   * `maxInFlight` requests are being handled already, or `maxReceiving` bodies are being received; retry shortly
   * (`Retry-After`) or on another replica
   */
  | 'overloaded'
  /** the server could not listen (port taken, address not available) */
  | 'listen_failed'
  /** a worker thread died on the request (out of memory: its heap is `workerMemoryMb`); the server carries on */
  | 'worker_failed'
  /** a bug: the request was fine but the server failed; the message says what threw */
  | 'internal';

const STATUS: Record<RewardServerErrorCode, number> = {
  invalid_options: 500,
  invalid_json: 400,
  invalid_request: 400,
  length_mismatch: 400,
  body_too_large: 413,
  body_timeout: 408,
  too_many_tokens: 413,
  invalid_estimator: 400,
  not_found: 404,
  method_not_allowed: 405,
  shutting_down: 503,
  overloaded: 503,
  listen_failed: 500,
  worker_failed: 500,
  internal: 500,
};

/** The parts of core's `ErrorLocation` a request error names: the JSON field, the item index, the JSONL line. */
export type RewardServerErrorLocation = Pick<ErrorLocation, 'field' | 'index' | 'line'>;

/** The JSON error body every refusal has. */
export interface RewardServerErrorBody {
  error: { code: RewardServerErrorCode; message: string } & RewardServerErrorLocation;
}

/** The one error class of `@rlvr/reward-server`. `code` is stable; `message` is for people. */
export class RewardServerError extends RlvrError<RewardServerErrorCode> {
  override readonly name = 'RewardServerError';

  /** The HTTP status this error is answered with. */
  get status(): number {
    return STATUS[this.code];
  }

  /** The JSON error body: `{"error": {"code", "message", "field"?, "index"?, "line"?}}`. */
  toJSON(): RewardServerErrorBody {
    const { field, index, line } = this.location;
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(field !== undefined ? { field } : {}),
        ...(index !== undefined ? { index } : {}),
        ...(line !== undefined ? { line } : {}),
      },
    };
  }
}

/** A value as it may appear in an error message: JSON, cut at `max` characters; never throws (cycles, deep nesting). */
export function preview(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value)
      ? 'a deeply nested array'
      : typeof value === 'object' && value !== null
        ? 'a deeply nested object'
        : String(value);
  }
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
