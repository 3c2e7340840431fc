/**
 * A local server that speaks vLLM's pooling protocol for a step-pooled PRM (`POST /pooling`,
 * `{"model", "input"}` in, one `[p_neg, p_pos]` row per `<extra_0>` out), on 127.0.0.1 at a free port.
 * It checks the request as vLLM would (method, path, JSON, model, input a string) and answers a bad
 * one with vLLM's error body. Its scores come from the request's text: each step is the text before
 * a step tag (the first after `<|im_start|>assistant\n`), scored by `stepScore`, so a test knows
 * which step text reached it and where each score must land.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const STEP_TAG = '<extra_0>';

/** A step's p_pos: a function of its text only, distinct for the texts of the tests, in (0, 1). */
export function stepScore(text: string): number {
  let h = 7;
  for (const b of Buffer.from(text, 'utf8')) h = (h * 31 + b) % 9973;
  return (h + 1) / 9975;
}

/** What the server answers: `ok` (the protocol), or one of the failures the client must name. */
type Mode = 'ok' | 'status500' | 'malformed' | 'extraStep' | 'silent';

interface Received {
  model: string;
  input: string;
  task?: string;
}

export interface PrmServer {
  url: string;
  model: string;
  /** every request body it parsed, in arrival order */
  received: Received[];
  /** the most requests it held at once */
  maxInFlight: number;
  /** what it answers from now on (`fail` only for the request whose text contains `failOn`) */
  mode: Mode;
  failOn: string | null;
  close(): Promise<void>;
}

export async function startPrmServer(model = 'Qwen/Qwen2.5-Math-PRM-7B'): Promise<PrmServer> {
  let inFlight = 0;
  const state = {
    url: '',
    model,
    received: [] as Received[],
    maxInFlight: 0,
    mode: 'ok' as Mode,
    failOn: null as string | null,
  };
  const error = (res: ServerResponse, code: number, message: string) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'error', message, type: 'BadRequestError', param: null, code }));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || req.url !== '/pooling') return error(res, 404, `no route ${req.method} ${req.url}`);
    if (!String(req.headers['content-type']).startsWith('application/json')) return error(res, 400, 'expected application/json');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return error(res, 400, 'body is not JSON');
    }
    if (body.model !== model) return error(res, 404, `The model \`${String(body.model)}\` does not exist.`);
    if (typeof body.input !== 'string') return error(res, 400, 'input must be a string here');
    const input = body.input;
    state.received.push({ model: body.model as string, input, ...(typeof body.task === 'string' ? { task: body.task } : {}) });
    const fails = state.failOn === null || input.includes(state.failOn);
    const mode = fails ? state.mode : 'ok';
    if (mode === 'silent') return; // never answers: the client's timeout must end it
    if (mode === 'status500') return error(res, 500, 'CUDA out of memory (simulated)');
    if (mode === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"object": "list", "data": [');
    }
    const turn = input.lastIndexOf('<|im_start|>assistant\n');
    const assistant = turn < 0 ? input : input.slice(turn + '<|im_start|>assistant\n'.length);
    const steps = assistant.split(STEP_TAG).slice(0, -1);
    const rows = steps.map((s) => {
      const p = stepScore(s);
      return [1 - p, p];
    });
    if (mode === 'extraStep') rows.push([0.5, 0.5]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `pool-${state.received.length}`,
        object: 'list',
        created: 0,
        model,
        data: [{ index: 0, object: 'pooling', data: rows }],
        usage: { prompt_tokens: input.length, total_tokens: input.length, completion_tokens: 0 },
      }),
    );
  };
  const server: Server = createServer((req, res) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    handle(req, res).catch((e: unknown) => error(res, 500, String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // a silent request's socket included
        server.close(() => resolve());
      }),
  });
}
