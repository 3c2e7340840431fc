/**
 * HTTP plumbing of `rlvr-serve`: OpenAI-style errors, JSON bodies read within a size limit, and a
 * 413 that reaches every client. A body whose `Content-Length` is over the limit is answered at
 * once, before any of it is read, and the connection closes after the client has sent it (its bytes
 * are read and dropped, up to a bound), so that a client that writes its whole body before reading,
 * such as Python's `urllib`, reads the 413 instead of a broken pipe.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonDepthExceeded, previewValue } from '@rlvr/core';

/**
 * Arrays and objects a request body may nest (the top one counts): the deepest real request is
 * about 5 (`messages[0].content[0].text`). Deeper is a 400 before any handler, whose schema
 * checks and messages recurse.
 */
const MAX_JSON_DEPTH = 64;

/** Characters of a value an error message echoes (`previewValue`), so that a huge value is not sent back whole. */
const ECHO_CHARS = 200;

/** A value as an error message shows it: its JSON, cut after 200 characters with "…". */
export const echo = (value: unknown): string => previewValue(value, ECHO_CHARS);

/** A name (a model, a path, a key) as an error message shows it, unquoted: cut after 200 characters with "…". */
export const echoName = (name: string): string => (name.length > ECHO_CHARS ? `${name.slice(0, ECHO_CHARS)}…` : name);

/** An error answered with its HTTP status and an OpenAI-style error body naming the parameter. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

const TYPES: Record<number, string> = {
  400: 'BadRequestError',
  408: 'RequestTimeoutError',
  401: 'AuthenticationError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  413: 'RequestTooLargeError',
  503: 'ServiceUnavailableError',
};

/** The longest error message sent: a backstop behind `echo` for messages that quote what others wrote (a template's, a tokenizer's). */
const MAX_MESSAGE_CHARS = 2000;

/** The body of an error response, as vLLM writes it. */
export function errorBody(err: HttpError): Record<string, unknown> {
  const message = err.message.length > MAX_MESSAGE_CHARS ? `${err.message.slice(0, MAX_MESSAGE_CHARS)}…` : err.message;
  const param = err.param !== null && err.param.length > ECHO_CHARS ? `${err.param.slice(0, ECHO_CHARS)}…` : err.param;
  return {
    object: 'error',
    error: { message, type: TYPES[err.status] ?? 'InternalServerError', param, code: err.status },
  };
}

/** A response body that is JSON text already (written by the text thread, or stringified there). */
export class JsonText {
  constructor(readonly text: string | Uint8Array) {}
}

/** Send a response: a string as Prometheus text, `JsonText` as it is, anything else as its JSON. */
export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  const payload = body === undefined ? '' : typeof body === 'string' ? body : body instanceof JsonText ? body.text : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; version=0.0.4; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

/**
 * A 413 for a body over `limit` bytes, written on the socket at once (with `Connection: close`);
 * the rest of the body is then read and dropped (no memory: only time, bounded), and the
 * connection ends once the client has sent it, so that a client that writes its whole body first
 * reads the 413 rather than a reset. A client that stops sending for 5 s, or is still sending after
 * 30 s, is cut off. Written past the `ServerResponse`, which would close the socket under a client
 * still sending.
 */
export function refuseTooLarge(req: IncomingMessage, limit: number): void {
  const payload = JSON.stringify(errorBody(new HttpError(413, `the body is larger than ${limit} bytes`)));
  const socket = req.socket;
  socket.write(
    `HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`,
  );
  const stop = (): void => void socket.destroy();
  const total = setTimeout(stop, 30_000);
  let idle = setTimeout(stop, 5_000);
  const clear = (): void => {
    clearTimeout(total);
    clearTimeout(idle);
  };
  req.on('data', () => {
    clearTimeout(idle);
    idle = setTimeout(stop, 5_000);
  });
  req.once('end', () => {
    clear();
    socket.end();
  });
  req.once('close', clear);
  req.resume();
}

/** The declared `Content-Length` is over `limit`. */
export function declaredTooLarge(req: IncomingMessage, limit: number): boolean {
  const n = Number(req.headers['content-length']);
  return Number.isFinite(n) && n > limit;
}

/**
 * Parse a request body: 400 when it is not JSON or nests deeper than `MAX_JSON_DEPTH` (naming the
 * field and the limit). The one parse of every route.
 */
export function parseBody(bytes: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new HttpError(400, `the body is not JSON: ${(e as Error).message}`);
  }
  const deep = jsonDepthExceeded(value, MAX_JSON_DEPTH);
  if (deep !== null) {
    // the field: the path up to its last key among the first few (`messages.0.content`, `prompt`)
    const head = deep.path.slice(0, 8);
    const lastKey = head.findLastIndex((k) => typeof k === 'string');
    const param = lastKey < 0 ? null : head.slice(0, lastKey + 1).join('.');
    throw new HttpError(
      400,
      `the body nests arrays and objects deeper than the limit of ${MAX_JSON_DEPTH} levels${param === null ? '' : ` (in ${param})`}`,
      param,
    );
  }
  return value;
}

/**
 * Read a body of at most `limit` bytes. Rejects with HttpError 413 as soon as the body grows over
 * it (the rest is left unread, for `refuseTooLarge`).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      req.off('end', onEnd);
      req.pause();
      reject(new HttpError(413, `the body is larger than ${limit} bytes`));
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}
