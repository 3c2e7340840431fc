import type { ServerResponse } from 'node:http';
import { errorBody, HttpError } from './http.js';

/** A server-sent event stream as OpenAI and vLLM write it: `data: JSON` events, then `data: [DONE]`. */
export class SseStream {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
  }

  send(event: unknown): void {
    if (!this.res.destroyed) this.res.write(`data: ${JSON.stringify(event)}\n\n`);
  }

  /** An error after the stream began: one error event, then the end (the status is already 200). */
  error(err: unknown): void {
    const e = err instanceof HttpError ? err : new HttpError(500, `internal error: ${(err as Error).message}`);
    this.send(errorBody(e));
    this.end();
  }

  end(): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.res.end('data: [DONE]\n\n');
  }
}
