/** Reading a request body with a hard size limit: nothing past the limit is ever stored. */
import type { IncomingMessage } from 'node:http';
import { RewardServerError } from './errors.js';

/** The client went away before its body was complete: there is no one to answer. */
export class ClientGone extends Error {
  override readonly name = 'ClientGone';
}

/**
 * Reads the whole body into one Buffer. Rejects with `RewardServerError('body_too_large')` as soon as the declared
 * `Content-Length` or the bytes received pass `limit` (the request is then paused: the caller answers 413 and
 * decides what to do with the rest), with `RewardServerError('body_timeout')` when the body is not whole
 * `timeoutMs` after the call (paused too: the caller answers 408 and closes the connection), and with `ClientGone`
 * when the connection closes first.
 */
export function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = (got: string) =>
      new RewardServerError(
        'body_too_large',
        `request body is ${got}, more than the limit of ${limit} bytes (server option maxBodyBytes, CLI --max-body-bytes)`,
      );
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      reject(tooLarge(`${declared} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const timer = setTimeout(() => {
      cleanup();
      chunks.length = 0;
      req.pause();
      reject(
        new RewardServerError(
          'body_timeout',
          `the request body did not arrive within ${timeoutMs} ms (${total} bytes came${declared === undefined ? '' : ` of ${declared}`}; server option bodyTimeoutMs, CLI --body-timeout-ms)`,
        ),
      );
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        cleanup();
        chunks.length = 0;
        req.pause();
        reject(tooLarge(`over ${total} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, total));
    };
    const onClose = () => {
      cleanup();
      reject(new ClientGone('the client closed the connection before the request body was complete'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}

/** Parses JSON text; a syntax error becomes `invalid_json` with the parser's message (position included). */
export function parseJson(text: string, what: string): unknown {
  if (text.trim() === '') throw new RewardServerError('invalid_json', `${what}: the body is empty; send a JSON document`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RewardServerError('invalid_json', `${what}: the body is not valid JSON: ${(err as Error).message}`, {}, { cause: err });
  }
}
