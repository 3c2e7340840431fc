/**
 * A protocol double of vLLM's OpenAI-compatible server, on 127.0.0.1 with a port
 * the OS picks. It is NOT a model: the real engine cannot run here, so the
 * "generations" are a deterministic function of (prompt, seed, choice index) over a
 * tiny vocabulary, in exactly the wire format vLLM uses with
 * `return_tokens_as_token_ids` (`"token_id:123"` strings in the log-probs; without log-probs
 * asked, `logprobs: null` and the text only), whole or as a server-sent event stream (`stream`,
 * with the final usage chunk of `stream_options`), with `echo` of a text prompt (tokenised as one
 * id per character). A fault script can make any attempt drop the connection, answer 500 / 503 /
 * 429 / 400, answer after the client's timeout, send malformed or off-protocol JSON, cut a stream
 * short, or stall one after its first event.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { Rng } from '@rlvr/core';

/** The double's vocabulary, as a vocabulary file (`encoding: utf8`); id 0 is EOS. */
export const FAKE_VOCAB = {
  encoding: 'utf8' as const,
  tokens: ['<eos>', '\\boxed{', '}', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ' ', 'The answer is ', '.', '\n', 'é'],
  special: [0],
};
const EOS = 0;
const digitIds = (n: number): number[] => [...String(n)].map((d) => 3 + Number(d));

export type Fault = 'drop' | '500' | '503' | '429' | '400' | 'slow' | 'malformed' | 'schema' | 'cut-stream' | 'stall-stream';

export interface FakeVllmOptions {
  model?: string;
  /** what to do on attempt `attempt` (0-based) of the request whose prompt is `key`; undefined = answer normally */
  fault?: (key: string, attempt: number) => Fault | undefined;
  /** how long a `slow` answer waits (default 60 s: past any client timeout of the tests) */
  slowMs?: number;
  /** the Retry-After header of 429 answers (default "0") */
  retryAfter?: string;
  /** also return vLLM's `prompt_token_ids` (as with `return_token_ids`), tokenising a text prompt as one id per character */
  promptTokenIds?: boolean;
  /** send choices in reverse index order (clients must sort by `index`) */
  reverseChoices?: boolean;
  /** wait this long before each event of a stream (a slow generation that keeps streaming) */
  streamGapMs?: number;
}

interface RecordedRequest {
  path: string;
  body: Record<string, unknown>;
  key: string;
  attempt: number;
}

export interface FakeVllm {
  /** base URL with `/v1` */
  url: string;
  requests: RecordedRequest[];
  /** highest number of requests in flight at once */
  maxInFlight: number;
  close(): Promise<void>;
}

/** The deterministic "generation" for one choice: some filler, an answer in a box, a period, EOS. */
export function fakeGeneration(key: string, seed: number, index: number): { ids: number[]; answer: number } {
  const rng = new Rng(`${seed}|${key}|${index}`);
  const ids: number[] = [];
  const filler = rng.int(4);
  for (let i = 0; i < filler; i++) ids.push(3 + rng.int(10), rng.int(5) === 0 ? 17 : 13);
  const answer = rng.int(1000);
  ids.push(14, 1, ...digitIds(answer), 2, 15, EOS);
  return { ids, answer };
}

/** The log-prob the double reports for token `id` at position `t` (a multiple of 1/8, exact in float32). */
export const fakeLogprob = (id: number, t: number): number => -(1 + ((id * 7 + t) % 10)) / 8;

const text = (ids: number[]): string =>
  ids
    .filter((i) => i !== EOS)
    .map((i) => FAKE_VOCAB.tokens[i])
    .join('');

/**
 * Write the choices as vLLM streams them: the echoed prompt first, then one chunk per token per
 * choice (the text cut where the stop string begins), the finish reason on the last, the usage
 * chunk, `[DONE]`; `gapMs` before each event; `fault` cuts the stream (the connection ends) or
 * stalls it (nothing more is sent) after the first token.
 */
async function stream(
  res: ServerResponse,
  chat: boolean,
  logprobs: boolean,
  echo: string | null,
  promptIds: number[],
  pieces: { tokens: string[]; texts: string[]; lps: number[]; out: string; finish: string }[],
  usage: object | null,
  fault: Fault | undefined,
  gapMs: number,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = async (choice: object) => {
    if (gapMs > 0) await sleep(gapMs);
    if (!res.destroyed)
      res.write(
        `data: ${JSON.stringify({ id: 'cmpl-stream', object: chat ? 'chat.completion.chunk' : 'text_completion', created: 0, model: 'fake', choices: [choice] })}\n\n`,
      );
  };
  for (const [index] of pieces.entries()) {
    if (chat) await send({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null });
    if (echo !== null)
      await send({
        index,
        text: echo,
        logprobs: { tokens: promptIds.map((id) => `token_id:${id}`), token_logprobs: [null, ...promptIds.slice(1).map(() => -0.5)] },
        finish_reason: null,
      });
  }
  const longest = Math.max(0, ...pieces.map((p) => p.tokens.length));
  for (let t = 0; t < longest; t++) {
    for (const [index, p] of pieces.entries()) {
      if (t >= p.tokens.length) continue;
      const start = p.texts.slice(0, t).join('').length;
      const text = p.out.slice(Math.min(start, p.out.length), Math.min(start + p.texts[t]!.length, p.out.length));
      const last = t === p.tokens.length - 1;
      const finish = last ? p.finish : null;
      if (chat)
        await send({
          index,
          delta: { content: text },
          logprobs: logprobs ? { content: [{ token: p.tokens[t], logprob: p.lps[t], bytes: [], top_logprobs: [] }] } : null,
          finish_reason: finish,
        });
      else
        await send({
          index,
          text,
          logprobs: logprobs ? { tokens: [p.tokens[t]], token_logprobs: [p.lps[t]] } : null,
          finish_reason: finish,
        });
    }
    if (fault === 'cut-stream' && t === 0) return void res.end(); // the connection ends before [DONE]
    if (fault === 'stall-stream' && t === 0) return; // nothing more until the client gives up
  }
  if (usage !== null)
    res.write(
      `data: ${JSON.stringify({ id: 'cmpl-stream', object: 'text_completion', created: 0, model: 'fake', choices: [], usage })}\n\n`,
    );
  res.end('data: [DONE]\n\n');
}

export async function startFakeVllm(options: FakeVllmOptions = {}): Promise<FakeVllm> {
  const model = options.model ?? 'fake-model';
  const attempts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const state: FakeVllm = { url: '', requests: [], maxInFlight: 0, close: async () => undefined };
  let inFlight = 0;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, payload: string, headers: Record<string, string> = {}) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(payload);
      };
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return send(400, JSON.stringify({ error: { message: 'body is not JSON' } }));
      }
      const path = req.url ?? '';
      const chat = path === '/v1/chat/completions';
      if (!chat && path !== '/v1/completions') return send(404, JSON.stringify({ error: { message: `no route ${path}` } }));
      const key = JSON.stringify(chat ? body.messages : body.prompt);
      const attempt = attempts.get(key) ?? 0;
      attempts.set(key, attempt + 1);
      state.requests.push({ path, body, key, attempt });

      const fault = options.fault?.(key, attempt);
      if (fault === 'drop') return void req.socket.destroy();
      if (fault === '500' || fault === '503') return send(Number(fault), JSON.stringify({ error: { message: 'engine error' } }));
      if (fault === '429')
        return send(429, JSON.stringify({ error: { message: 'rate limited' } }), { 'retry-after': options.retryAfter ?? '0' });
      if (fault === '400') return send(400, JSON.stringify({ error: { message: 'bad request' } }));
      if (fault === 'malformed') return send(200, '{"choices": [{"index": 0, "te');
      if (fault === 'schema') return send(200, JSON.stringify({ choices: [{ index: 0, text: 7 }] }));

      if (body.model !== model) return send(404, JSON.stringify({ error: { message: `model ${String(body.model)} does not exist` } }));
      const logprobs = chat ? body.logprobs === true : body.logprobs != null;
      if (logprobs && body.return_tokens_as_token_ids !== true)
        return send(400, JSON.stringify({ error: { message: 'this double needs return_tokens_as_token_ids with logprobs' } }));
      const n = typeof body.n === 'number' ? body.n : 1;
      const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16;
      const seed = typeof body.seed === 'number' ? body.seed : 0;
      const stop = Array.isArray(body.stop) ? (body.stop as string[]) : [];
      const echo = !chat && body.echo === true && typeof body.prompt === 'string';
      const promptIds =
        typeof body.prompt === 'string'
          ? [...body.prompt].map((ch) => ch.charCodeAt(0))
          : Array.isArray(body.prompt)
            ? (body.prompt as number[])
            : [];
      let completionTokens = 0;
      /** per choice: the token texts (to stream) and the final text */
      const pieces: { tokens: string[]; texts: string[]; lps: number[]; out: string; finish: string }[] = [];
      const choices = Array.from({ length: n }, (_, index) => {
        let ids = fakeGeneration(key, seed, index).ids;
        let finish = 'stop';
        // stop strings: end at the token that completes the first one; the text leaves it out (as vLLM does)
        let cut = -1;
        for (let t = 1; t <= ids.length && cut < 0; t++) if (stop.some((s) => text(ids.slice(0, t)).includes(s))) cut = t;
        let out = text(ids);
        if (cut >= 0) {
          ids = ids.slice(0, cut);
          const full = text(ids);
          const at = Math.min(...stop.map((s) => full.indexOf(s)).filter((x) => x >= 0));
          out = full.slice(0, at);
        }
        if (ids.length > maxTokens) {
          ids = ids.slice(0, maxTokens);
          out = text(ids);
          finish = 'length';
        }
        const lps = ids.map((id, t) => fakeLogprob(id, t));
        const tokens = ids.map((id) => `token_id:${id}`);
        completionTokens += ids.length;
        pieces.push({ tokens, texts: ids.map((id) => (id === EOS ? '' : FAKE_VOCAB.tokens[id]!)), lps, out, finish });
        if (chat) {
          return {
            index,
            message: { role: 'assistant', content: out },
            logprobs: logprobs ? { content: tokens.map((token, t) => ({ token, logprob: lps[t], bytes: [], top_logprobs: [] })) } : null,
            finish_reason: finish,
            stop_reason: null,
          };
        }
        if (echo) {
          const p = body.prompt as string;
          return {
            index,
            text: p + out,
            logprobs: {
              text_offset: [],
              token_logprobs: [null, ...promptIds.slice(1).map(() => -0.5), ...lps],
              tokens: [...promptIds.map((id) => `token_id:${id}`), ...tokens],
              top_logprobs: [],
            },
            finish_reason: finish,
            stop_reason: null,
          };
        }
        return {
          index,
          text: out,
          logprobs: logprobs ? { text_offset: [], token_logprobs: lps, tokens, top_logprobs: [] } : null,
          finish_reason: finish,
          stop_reason: null,
        };
      });
      if (options.reverseChoices) choices.reverse();
      const usage = {
        prompt_tokens: promptIds.length,
        completion_tokens: completionTokens,
        total_tokens: promptIds.length + completionTokens,
      };
      if (body.stream === true)
        return void stream(
          res,
          chat,
          logprobs,
          echo ? (body.prompt as string) : null,
          promptIds,
          pieces,
          (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true ? usage : null,
          fault,
          options.streamGapMs ?? 0,
        );
      const response: Record<string, unknown> = {
        id: `cmpl-${state.requests.length}`,
        object: chat ? 'chat.completion' : 'text_completion',
        created: 0,
        model,
        choices,
        usage,
      };
      if (options.promptTokenIds) response.prompt_token_ids = [...key].map((ch) => ch.charCodeAt(0));
      const payload = JSON.stringify(response);
      if (fault === 'slow') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send(200, payload);
        }, options.slowMs ?? 60_000);
        timers.add(timer);
        return;
      }
      send(200, payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}/v1`;
  state.close = async () => {
    for (const t of timers) clearTimeout(t);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
