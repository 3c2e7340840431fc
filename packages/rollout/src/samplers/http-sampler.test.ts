import { afterEach, describe, expect, it } from 'vitest';
import { CoreError } from '@rlvr/core';
import { httpSampler, mapPool, type HttpSamplerEvent } from './http-sampler.js';
import { RolloutError } from '../errors.js';
import type { Logger } from '@rlvr/core';
import type { SampleRequest } from './sampler.js';
import { startFakeVllm, fakeGeneration, fakeLogprob, type Fault, type FakeVllm } from '../test-utils/fake-vllm.js';
import { describeSamplerContract } from '../test-utils/sampler-contract.js';

const servers: FakeVllm[] = [];
async function server(...args: Parameters<typeof startFakeVllm>): Promise<FakeVllm> {
  const s = await startFakeVllm(...args);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * Short backoffs: the faults below cost milliseconds. The attempt timeout is far above what a
 * loopback answer takes on a busy machine, and far below a `slow` answer (60 s, never reached).
 */
const FAST = { timeoutMs: 3000, maxRetries: 3, backoffBaseMs: 2, backoffMaxMs: 20 };
const params = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 64, stop: [], seed: 5 };

describeSamplerContract('http /v1/completions (token-id prompts) against the vLLM protocol double', async () => {
  const s = await server();
  return {
    sampler: httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST }),
    prompts: [{ tokens: [5, 6, 7] }, { tokens: [8] }, { tokens: [9, 9] }],
    stop: 'The answer',
  };
});

describeSamplerContract('http /v1/chat/completions against the vLLM protocol double', async () => {
  const s = await server();
  return {
    sampler: httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint: 'chat', ...FAST }),
    prompts: [{ messages: [{ role: 'user', content: 'a' }] }, { messages: [{ role: 'user', content: 'b' }] }],
    stop: 'The answer',
  };
});

describe('httpSampler: protocol', () => {
  it('sends the vLLM completions body and reads token ids, log-probs and finish reasons back', async () => {
    const s = await server({ reverseChoices: true });
    const sampler = httpSampler({ baseUrl: s.url + '/', model: 'fake-model', extraBody: { repetition_penalty: 1 } });
    const [out] = await sampler.sample([{ prompt: { tokens: [1, 2, 3] }, n: 3, params: { ...params, topK: 20, stop: ['\n\n'] } }]);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.path).toBe('/v1/completions');
    expect(s.requests[0]!.body).toEqual({
      model: 'fake-model',
      prompt: [1, 2, 3],
      n: 3,
      max_tokens: 64,
      temperature: 1,
      top_p: 1,
      top_k: 20,
      seed: 5,
      stop: ['\n\n'],
      logprobs: 0,
      return_tokens_as_token_ids: true,
      repetition_penalty: 1,
    });
    expect(out!.promptTokens).toEqual([1, 2, 3]);
    // choices came back in reverse order; completions are in index order
    out!.completions.forEach((c, j) => {
      const want = fakeGeneration('[1,2,3]', 5, j).ids;
      expect(c.tokens).toEqual(want);
      expect(c.logprobs).toEqual(want.map((id, t) => fakeLogprob(id, t)));
      expect(c.finish).toBe('stop');
    });
  });

  it('leaves top_k and stop out when off, and sends text prompts as text', async () => {
    const s = await server();
    await httpSampler({ baseUrl: s.url, model: 'fake-model' }).sample([{ prompt: { text: 'User: hi\n\nAssistant:\n' }, n: 1, params }]);
    const body = s.requests[0]!.body;
    expect(body.prompt).toBe('User: hi\n\nAssistant:\n');
    expect('top_k' in body || 'stop' in body).toBe(false);
  });

  it('sends chat messages with logprobs on', async () => {
    const s = await server();
    const [out] = await httpSampler({
      baseUrl: s.url,
      model: 'fake-model',
      endpoint: 'chat',
      extraBody: { chat_template_kwargs: { enable_thinking: false } },
    }).sample([{ prompt: { messages: [{ role: 'user', content: 'Q' }] }, n: 2, params }]);
    expect(s.requests[0]!.path).toBe('/v1/chat/completions');
    expect(s.requests[0]!.body).toMatchObject({
      messages: [{ role: 'user', content: 'Q' }],
      logprobs: true,
      top_logprobs: 0,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(out!.promptTokens).toEqual([]);
    expect(out!.completions[1]!.tokens).toEqual(fakeGeneration(JSON.stringify([{ role: 'user', content: 'Q' }]), 5, 1).ids);
    expect(out!.completions[0]!.text).toMatch(/^.*The answer is \\boxed\{\d+\}\.$/s);
  });

  it('takes prompt token ids from the response when the prompt has none', async () => {
    const s = await server({ promptTokenIds: true });
    const [out] = await httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint: 'chat' }).sample([
      { prompt: { messages: [{ role: 'user', content: 'Q' }] }, n: 1, params },
    ]);
    expect(out!.promptTokens).toEqual([...JSON.stringify([{ role: 'user', content: 'Q' }])].map((c) => c.charCodeAt(0)));
  });

  it('rejects bad options and unusable prompts before sending anything', async () => {
    expect(() => httpSampler({ baseUrl: 'ftp://x', model: 'm' })).toThrow(CoreError);
    expect(() => httpSampler({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', concurrency: 0 })).toThrow(/concurrency/);
    const s = await server();
    const chat = httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint: 'chat' });
    await expect(chat.sample([{ prompt: { text: 'x' }, n: 2, params }])).rejects.toThrow(/needs messages/);
    await expect(httpSampler({ baseUrl: s.url, model: 'fake-model' }).sample([{ prompt: {}, n: 1, params }])).rejects.toBeInstanceOf(
      RolloutError,
    );
    expect(s.requests).toHaveLength(0);
  });
});

describe('httpSampler: faults (fault-injecting vLLM protocol double)', () => {
  /** Prompt i's tokens are [i]; its fault script is scripts[i]: one entry per attempt, then normal answers. */
  async function run(scripts: (Fault | undefined)[][], opts: Record<string, unknown> = {}) {
    const s = await server({ fault: (key, attempt) => scripts[JSON.parse(key)[0]]?.[attempt] });
    const events: HttpSamplerEvent[] = [];
    const warnings: string[] = [];
    const logger: Logger = { info: () => undefined, warn: (m) => warnings.push(m) };
    const sampler = httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST, ...opts }, { onEvent: (e) => events.push(e), logger });
    const requests: SampleRequest[] = scripts.map((_, i) => ({ prompt: { tokens: [i] }, n: 2, params }));
    const out = await sampler.sample(requests);
    const attemptsOf = (i: number) => s.requests.filter((r) => r.key === `[${i}]`).length;
    return { s, out, events, warnings, attemptsOf };
  }

  it('retries 500, 503, 429, dropped connections, timeouts and malformed JSON until an answer comes', async () => {
    const { out, events, attemptsOf } = await run([['500', '429', 'drop'], ['slow'], ['malformed', '503'], []]);
    expect([0, 1, 2, 3].map(attemptsOf)).toEqual([4, 2, 3, 1]);
    out.forEach((r, i) => {
      expect(r.promptTokens).toEqual([i]);
      r.completions.forEach((c, j) => expect(c.tokens).toEqual(fakeGeneration(`[${i}]`, 5, j).ids));
    });
    const retries = events.filter((e) => e.type === 'retry');
    expect(retries.map((e) => (e as { request: number }).request).sort()).toEqual([0, 0, 0, 1, 2, 2]);
    const reasons = retries.map((e) => (e as { reason: string }).reason).join('\n');
    expect(reasons).toMatch(/HTTP 500/);
    expect(reasons).toMatch(/HTTP 429/);
    expect(reasons).toMatch(/connection error/);
    expect(reasons).toMatch(/timed out after 3000 ms/);
    expect(reasons).toMatch(/body is not JSON/);
    expect(retries.every((e) => (e as { delayMs: number }).delayMs <= FAST.backoffMaxMs)).toBe(true);
    expect(events.some((e) => e.type === 'failed')).toBe(false);
  });

  it('marks a request that exhausts its retries as error, reports it, and keeps every other rollout in order', async () => {
    const always = (f: Fault): Fault[] => Array(10).fill(f);
    const { out, events, warnings, attemptsOf } = await run([
      [],
      always('503'),
      [],
      always('drop'),
      always('slow'),
      ['schema'],
      ['400'],
      [],
    ]);
    // the retry budget: 1 + maxRetries attempts for retryable faults, 1 for protocol errors and 4xx
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(attemptsOf)).toEqual([1, 4, 1, 4, 4, 1, 1, 1]);
    expect(out).toHaveLength(8);
    out.forEach((r, i) => {
      expect(r.completions).toHaveLength(2);
      const failed = [1, 3, 4, 5, 6].includes(i);
      for (const [j, c] of r.completions.entries()) {
        if (failed) {
          expect(c).toMatchObject({ tokens: [], finish: 'error' });
          expect(c.error).toBeTruthy();
        } else {
          expect(c.tokens).toEqual(fakeGeneration(`[${i}]`, 5, j).ids);
        }
      }
    });
    expect(out[1]!.completions[0]!.error).toMatch(/^HTTP 503: .*\(after 4 attempts\)$/);
    expect(out[4]!.completions[0]!.error).toMatch(/timed out/);
    expect(out[5]!.completions[0]!.error).toMatch(/invalid response: .*does not match the completions protocol.*\(after 1 attempt\)$/);
    expect(out[6]!.completions[0]!.error).toMatch(/^HTTP 400/);
    const failedEvents = events
      .filter((e) => e.type === 'failed')
      .map((e) => (e as { request: number }).request)
      .sort();
    expect(failedEvents).toEqual([1, 3, 4, 5, 6]);
    expect(warnings).toHaveLength(5);
    expect(warnings.find((w) => w.startsWith('request for prompt 1 '))).toMatch(
      /failed after 4 attempt\(s\); its 2 rollouts are marked "error"/,
    );
  });

  it('honours Retry-After on 429, capped at backoffMaxMs', async () => {
    const s = await server({ fault: (_, attempt) => (attempt === 0 ? '429' : undefined), retryAfter: '3' });
    const events: HttpSamplerEvent[] = [];
    await httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST }, { onEvent: (e) => events.push(e) }).sample([
      { prompt: { tokens: [1] }, n: 1, params },
    ]);
    expect(events.filter((e) => e.type === 'retry')).toEqual([
      { type: 'retry', request: 0, attempt: 0, reason: expect.stringMatching(/^HTTP 429/), delayMs: FAST.backoffMaxMs },
    ]);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const s = await server({ fault: () => 'slow', slowMs: 30 });
    const sampler = httpSampler({ baseUrl: s.url, model: 'fake-model', concurrency: 3 });
    const out = await sampler.sample(Array.from({ length: 10 }, (_, i) => ({ prompt: { tokens: [i] }, n: 1, params })));
    expect(out.map((r) => r.promptTokens[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(s.maxInFlight).toBeLessThanOrEqual(3);
    expect(s.maxInFlight).toBeGreaterThanOrEqual(2);
  });

  it('fails a dead server after the retry budget, without hanging', async () => {
    const s = await server();
    const url = s.url;
    await s.close();
    const events: HttpSamplerEvent[] = [];
    const [r] = await httpSampler({ baseUrl: url, model: 'fake-model', ...FAST }, { onEvent: (e) => events.push(e) }).sample([
      { prompt: { tokens: [1] }, n: 3, params },
    ]);
    expect(r!.completions.map((c) => c.finish)).toEqual(['error', 'error', 'error']);
    expect(r!.completions[0]!.error).toMatch(/connection error.*ECONNREFUSED/);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(3);
  });

  it('stops when the caller aborts', async () => {
    const s = await server({ fault: () => 'slow', slowMs: 5000 });
    const ac = new AbortController();
    const p = httpSampler({ baseUrl: s.url, model: 'fake-model', timeoutMs: 10_000 }).sample(
      [{ prompt: { tokens: [1] }, n: 1, params }],
      ac.signal,
    );
    setTimeout(() => ac.abort(new Error('stop now')), 50);
    await expect(p).rejects.toThrow('stop now');
    // also while waiting to retry
    const s2 = await server({ fault: () => '503' });
    const ac2 = new AbortController();
    const q = httpSampler({ baseUrl: s2.url, model: 'fake-model', backoffBaseMs: 5000, backoffMaxMs: 5000, maxRetries: 5 }).sample(
      [{ prompt: { tokens: [1] }, n: 1, params }],
      ac2.signal,
    );
    setTimeout(() => ac2.abort(new Error('stop waiting')), 50);
    await expect(q).rejects.toThrow('stop waiting');
  });
});

describe('httpSampler: stream and echo', () => {
  it('stream: the same completions as one response, for completions and chat; a stream cut short is retried', async () => {
    const s = await server();
    for (const endpoint of ['completions', 'chat'] as const) {
      const prompt = endpoint === 'chat' ? { messages: [{ role: 'user' as const, content: 'q' }] } : { tokens: [3, 4] };
      const req: SampleRequest[] = [
        { prompt, n: 3, params: { ...params, stop: ['The answer'] } },
        { prompt, n: 2, params: { ...params, seed: 9 } },
      ];
      const whole = await httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint, ...FAST }).sample(req);
      const streamed = await httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint, stream: true, ...FAST }).sample(req);
      expect(streamed).toEqual(whole);
      expect(s.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    }
    const cut = await server({ fault: (_, attempt) => (attempt === 0 ? 'cut-stream' : undefined) });
    const events: HttpSamplerEvent[] = [];
    const [r] = await httpSampler(
      { baseUrl: cut.url, model: 'fake-model', stream: true, ...FAST },
      { onEvent: (e) => events.push(e) },
    ).sample([{ prompt: { tokens: [1] }, n: 2, params }]);
    expect(r!.completions.map((c) => c.tokens)).toEqual([0, 1].map((j) => fakeGeneration('[1]', 5, j).ids));
    expect(events.filter((e) => e.type === 'retry').map((e) => (e as { reason: string }).reason)).toEqual([
      expect.stringMatching(/^stream: the stream ended without \[DONE\]/),
    ]);
  });

  it('echo: a text prompt comes back with its token ids, the same ids the server returns as prompt_token_ids, streamed or not', async () => {
    const s = await server();
    const req: SampleRequest[] = [{ prompt: { text: 'Ann has 3 cats.' }, n: 2, params }];
    const ids = [...'Ann has 3 cats.'].map((c) => c.charCodeAt(0));
    for (const stream of [false, true]) {
      const [r] = await httpSampler({ baseUrl: s.url, model: 'fake-model', echo: true, stream, ...FAST }).sample(req);
      expect(s.requests.at(-1)!.body.echo).toBe(true);
      expect(r!.promptTokens).toEqual(ids);
      r!.completions.forEach((c, j) => expect(c.tokens).toEqual(fakeGeneration(JSON.stringify('Ann has 3 cats.'), 5, j).ids));
    }
    const [plain] = await httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST }).sample(req);
    expect(plain!.promptTokens).toEqual([]); // this double returns no prompt_token_ids: without echo the ids are unknown
  });
});

describe('httpSampler: returns text', () => {
  it('asks for no log-probs and gives the text, finish and token count the token path gives, streamed or not, on both endpoints', async () => {
    const s = await server({ reverseChoices: true });
    for (const endpoint of ['completions', 'chat'] as const) {
      const prompt = endpoint === 'chat' ? { messages: [{ role: 'user' as const, content: 'q' }] } : { text: 'Ann has 3 cats.' };
      const req: SampleRequest[] = [
        { prompt, n: 3, params: { ...params, stop: ['The answer'] } },
        { prompt, n: 2, params: { ...params, seed: 9, maxNewTokens: 5 } },
      ];
      const tokens = await httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint, ...FAST }).sample(req);
      for (const stream of [false, true]) {
        const text = await httpSampler({ baseUrl: s.url, model: 'fake-model', endpoint, returns: 'text', stream, ...FAST }).sample(req);
        const body = s.requests.at(-1)!.body;
        for (const k of ['logprobs', 'top_logprobs', 'return_tokens_as_token_ids']) expect(body, k).not.toHaveProperty(k);
        text.forEach((r, i) => {
          const want = tokens[i]!;
          expect(r.completions).toEqual(want.completions.map((c) => ({ tokens: [], finish: c.finish, text: c.text })));
          expect(r.completionTokens).toBe(want.completions.reduce((n, c) => n + c.tokens.length, 0));
        });
      }
    }
    // the second request was cut by max tokens: the count covers both kinds of ending
    expect(s.requests.at(-1)!.body.max_tokens).toBe(5);
  });

  it('refuses echo with text (the prompt ids come through the log-probs)', () => {
    expect(() => httpSampler({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', returns: 'text', echo: true })).toThrow(
      /echo: echo gives the prompt token ids through the log-probs: it needs returns "tokens"/,
    );
  });
});

describe('httpSampler: a stream is read as it arrives', () => {
  it('timeoutMs bounds the wait for the next event, not the generation: a slow stream that keeps sending completes, a stalled one is retried', async () => {
    // one event per token, 100 ms apart: 3 completions of 8 tokens or more take 2.4 s or more, over
    // the 1.5 s timeout, and the stream is never 1.5 s without data
    const slow = await server({ streamGapMs: 100 });
    const opts = { ...FAST, timeoutMs: 1500, stream: true };
    const want = [0, 1, 2].map((j) => fakeGeneration('[4]', 5, j).ids);
    expect(want.flat().length).toBeGreaterThanOrEqual(24);
    const [r] = await httpSampler({ baseUrl: slow.url, model: 'fake-model', ...opts }).sample([{ prompt: { tokens: [4] }, n: 3, params }]);
    expect(r!.completions.map((c) => c.tokens)).toEqual(want);
    const stall = await server({ fault: (_, attempt) => (attempt === 0 ? 'stall-stream' : undefined) });
    const events: HttpSamplerEvent[] = [];
    const [q] = await httpSampler({ baseUrl: stall.url, model: 'fake-model', ...opts }, { onEvent: (e) => events.push(e) }).sample([
      { prompt: { tokens: [4] }, n: 2, params },
    ]);
    expect(q!.completions.map((c) => c.tokens)).toEqual([0, 1].map((j) => fakeGeneration('[4]', 5, j).ids));
    expect(events.filter((e) => e.type === 'retry').map((e) => (e as { reason: string }).reason)).toEqual(['stream: no data for 1500 ms']);
  });
});

describe('mapPool', () => {
  it('keeps order and the concurrency bound', async () => {
    let inFlight = 0;
    let max = 0;
    const out = await mapPool([5, 1, 4, 2, 3, 0], 2, async (x, i) => {
      max = Math.max(max, ++inFlight);
      await new Promise((r) => setTimeout(r, x));
      inFlight--;
      return x * 10 + i;
    });
    expect(out).toEqual([50, 11, 42, 23, 34, 5]);
    expect(max).toBe(2);
  });
});
