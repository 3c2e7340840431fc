/**
 * rlvr-serve decoding on policy workers (issue 17): `--workers 2` gives the completions of
 * `--workers 1` (greedy and seeded sampling, requests in flight together), every concurrent
 * request completes, and a worker that dies fails the requests in flight with its error, then
 * every later generation request with a 503 naming it; the server never hangs. Nothing here
 * measures time.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel, loadTokenizer, PolicyWorkers } from '@rlvr/policy';
import { startPolicyServer, type PolicyServer } from './server.js';
import { call, serveTiny, type Served } from '../test-utils/served.js';

// The workers load the decode task from dist/ (a worker cannot run TypeScript): build first.

let one: Served;
let two: Served;

beforeAll(async () => {
  // the same total room: one batch of 8 rows, or two of 4 (each server on its own copy of the seeded tiny model)
  one = await serveTiny(['--workers', '1', '--batch-size', '8']);
  two = await serveTiny(['--workers', '2', '--batch-size', '4'], { quiet: false });
});
afterAll(async () => {
  await one?.close();
  await two?.close();
});

/** the origin of a server started in the test itself */
const at = (server: PolicyServer) => ({ origin: server.url.replace(/\/v1$/, '') });

const PROMPTS = [
  'Ann has 12 apples.',
  'Tom has 80 stones. He buys 53 more.',
  'Ben',
  'The answer is \\boxed{42}.',
  'Sue has 7 pens. She gives away 3.',
  'Lee has',
  'Max has 30 cards. He buys 12 more, then gives away 9.',
  'Kim',
];
const body = (i: number, extra: Record<string, unknown>) => ({
  model: 'tiny',
  prompt: PROMPTS[i]!,
  max_tokens: 8 + 3 * i,
  logprobs: 0,
  return_tokens_as_token_ids: true,
  n: 2,
  ...extra,
});
/** every request at once; per request, per choice: the token ids, the log-probs and the finish reason */
async function together(s: Served, extra: (i: number) => Record<string, unknown>) {
  const rs = await Promise.all(PROMPTS.map((_, i) => call(s, '/v1/completions', body(i, extra(i)))));
  for (const r of rs) expect(r.status, JSON.stringify(r.json)).toBe(200);
  return rs.map((r) =>
    (r.json.choices as { logprobs: { tokens: string[]; token_logprobs: number[] }; finish_reason: string }[]).map((c) => ({
      tokens: c.logprobs.tokens.map((t) => Number(t.slice('token_id:'.length))),
      logprobs: c.logprobs.token_logprobs,
      finish: c.finish_reason,
    })),
  );
}

function expectSame(got: Awaited<ReturnType<typeof together>>, want: Awaited<ReturnType<typeof together>>): void {
  expect(got.map((r) => r.map((c) => [c.tokens, c.finish]))).toEqual(want.map((r) => r.map((c) => [c.tokens, c.finish])));
  // the floats of a row may move in the last bits with the batch layout (which rows share a batch)
  got.forEach((r, i) => r.forEach((c, j) => expect(c.logprobs).toEqual(want[i]![j]!.logprobs.map((x) => expect.closeTo(x, 4)))));
}

describe('rlvr-serve --workers', () => {
  it('says it decodes on the workers; 2 workers give the greedy completions of 1 for requests in flight together', async () => {
    expect(two.stderr()).toMatch(/decoding on 2 policy workers, 4 rows each/);
    const greedy = () => ({ temperature: 0 });
    const want = await together(one, greedy);
    const got = await together(two, greedy);
    expectSame(got, want);
    // a request alone gets what it got among the others
    const alone = await call(two, '/v1/completions', body(1, { temperature: 0 }));
    expect(alone.json.choices.map((c: { logprobs: { tokens: string[] } }) => c.logprobs.tokens.map((t) => Number(t.slice(9))))).toEqual(
      want[1]!.map((c) => c.tokens),
    );
  });

  it('seeded sampled completions are the same with 1 and 2 workers', async () => {
    const sampled = (i: number) => ({ temperature: 0.9, top_p: 0.95, top_k: 30, seed: 100 + i, n: 3 });
    const want = await together(one, sampled);
    const got = await together(two, sampled);
    expectSame(got, want);
    // the rows of a request differ from each other (they draw from their own streams)
    expect(new Set(got.flat().map((c) => c.tokens.join(','))).size).toBeGreaterThan(PROMPTS.length);
  });

  it('concurrent requests, streamed or whole, through the openai client and raw HTTP, all complete; the queue empties', async () => {
    const client = new OpenAI({ baseURL: two.server.url, apiKey: 'unused', maxRetries: 0 });
    const n = 24; // 48 rows for 8 slots: most wait in the queue
    const results = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const maxTokens = 3 + (i % 7) * 4;
        const params = { model: 'tiny', prompt: PROMPTS[i % PROMPTS.length]!, max_tokens: maxTokens, n: 2, seed: i, ignore_eos: true };
        if (i % 3 === 0) {
          const stream = await client.completions.create({ ...params, stream: true, stream_options: { include_usage: true } } as any);
          let tokens = 0;
          for await (const chunk of stream as unknown as AsyncIterable<{ usage?: { completion_tokens: number } }>)
            if (chunk.usage) tokens = chunk.usage.completion_tokens;
          return [tokens, 2 * maxTokens];
        }
        if (i % 3 === 1) {
          const r = await client.completions.create(params as any);
          return [r.usage!.completion_tokens, 2 * maxTokens];
        }
        const r = await call(two, '/v1/completions', params);
        expect(r.status).toBe(200);
        return [r.json.usage.completion_tokens, 2 * maxTokens];
      }),
    );
    for (const [got, want] of results) expect(got).toBe(want);
    const metrics = await (await fetch(two.server.url.replace(/\/v1$/, '/metrics'))).text();
    expect(metrics).toMatch(/^vllm:num_requests_running\{[^}]*\} 0$/m);
    expect(metrics).toMatch(/^rlvr:num_sequences_waiting\{[^}]*\} 0$/m);
    expect((await fetch(two.server.url.replace(/\/v1$/, '/health'))).status).toBe(200);
  });
});

// Exits the worker thread with code 7 at its replica's `input.call`-th decode step from now, in
// worker `input.worker` (a task module: workers import it by URL, as they import the decode task).
const POISON = `data:text/javascript,${encodeURIComponent(`
export function exitOnStep(ctx, input) {
  if (ctx.index !== input.worker) return null;
  const step = ctx.model.decodeStep.bind(ctx.model);
  let calls = 0;
  ctx.model.decodeStep = (...args) => {
    if (++calls === input.call) process.exit(7);
    return step(...args);
  };
  return null;
}

export function exitSoon(ctx, input) {
  if (ctx.index === input.worker) setTimeout(() => process.exit(9), 20);
  return null;
}`)}`;

describe('a policy worker that dies', () => {
  it('fails the requests in flight with its error, then answers 503 naming it; /metrics still answers; close() returns', async () => {
    const model = loadModel(one.dir, { trainable: false });
    const tokenizer = loadTokenizer(one.dir);
    const engine = await PolicyWorkers.start(model, { workers: 2 });
    const server = await startPolicyServer({ model, tokenizer, workers: engine }, { port: 0, servedModelName: 'tiny', batchSize: 4 });
    try {
      const request = (i: number) => call(at(server), '/v1/completions', body(i, { temperature: 0, max_tokens: 12, ignore_eos: true }));
      expect((await request(0)).status).toBe(200);
      // idle now: worker 1 exits at its third decode step from here
      await engine.run(POISON, 'exitOnStep', [
        { worker: 1, call: 3 },
        { worker: 1, call: 3 },
      ]);
      const inFlight = await Promise.all([0, 1, 2].map(request));
      for (const r of inFlight) {
        expect(r.status).toBe(503);
        expect(r.json.error.message).toBe(
          'the decode workers failed, restart rlvr-serve: policy worker 1 of 2 exited with code 7; the engine is closed, start a new one',
        );
      }
      const later = await request(3);
      expect(later.status).toBe(503);
      expect(later.json.error).toMatchObject({ type: 'ServiceUnavailableError', code: 503 });
      expect(later.json.error.message).toMatch(/^the decode workers failed, restart rlvr-serve: .*policy worker 1 of 2 exited with code 7/);
      const health = await fetch(server.url.replace(/\/v1$/, '/health'));
      expect(health.status).toBe(503);
      const metrics = await fetch(server.url.replace(/\/v1$/, '/metrics'));
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^vllm:num_requests_running\{[^}]*\} 0$/m);
    } finally {
      await server.close();
      await engine.close();
      model.dispose();
      tokenizer.free();
    }
  });

  it('a worker that dies between requests: the next request and /health get a 503 naming it', async () => {
    const model = loadModel(one.dir, { trainable: false });
    const tokenizer = loadTokenizer(one.dir);
    const engine = await PolicyWorkers.start(model, { workers: 2 });
    const server = await startPolicyServer({ model, tokenizer, workers: engine }, { port: 0, servedModelName: 'tiny', batchSize: 4 });
    try {
      expect((await call(at(server), '/v1/completions', body(2, { temperature: 0 }))).status).toBe(200);
      await engine.run(POISON, 'exitSoon', [{ worker: 0 }, { worker: 0 }]);
      while (engine.usable) await new Promise((r) => setTimeout(r, 20));
      const health = await fetch(server.url.replace(/\/v1$/, '/health'));
      expect(health.status).toBe(503);
      const r = await call(at(server), '/v1/completions', body(2, { temperature: 0 }));
      expect(r.status).toBe(503);
      expect(r.json.error.message).toMatch(/^the decode workers failed, restart rlvr-serve: .*policy worker 0 of 2 exited with code 9/);
    } finally {
      await server.close();
      await engine.close();
      model.dispose();
      tokenizer.free();
    }
  });
});
