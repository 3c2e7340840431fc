/** A tiny HTTP client on node:http for the tests: real sockets, full control over bodies and disconnects. */
import { type Agent, type IncomingHttpHeaders, request } from 'node:http';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
}

export function send(
  url: string,
  method: string,
  body?: string | Buffer,
  opts: { headers?: Record<string, string>; agent?: Agent | false } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { 'content-type': 'application/json', ...opts.headers }, agent: opts.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const post = (url: string, body: unknown, opts?: { headers?: Record<string, string>; agent?: Agent | false }) =>
  send(url, 'POST', typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), opts);

/** Runs `tasks` with at most `limit` in flight; results in order. */
export async function bounded<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return out;
}
