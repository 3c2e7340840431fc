/**
 * Continuous batching in rlvr-serve (issue 18): concurrent requests share the running decode
 * batch, a new request joins it while another is decoding, and each request gets the completion
 * it gets alone. Nothing here measures time: the order of events shows the sharing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { call, greedyReference, serveTiny, type Served } from '../test-utils/served.js';

let s: Served;
beforeAll(async () => {
  s = await serveTiny(['--batch-size', '16', '--workers', '1']);
});
afterAll(() => s?.close());

const body = (prompt: string, maxTokens: number, extra: Record<string, unknown> = {}) => ({
  model: 'tiny',
  prompt,
  max_tokens: maxTokens,
  temperature: 0,
  logprobs: 0,
  return_tokens_as_token_ids: true,
  ...extra,
});
const tokensOf = (r: { json: { choices: { logprobs: { tokens: string[] } }[] } }) =>
  r.json.choices.map((c) => c.logprobs.tokens.map((t) => Number(t.slice(9))));
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

describe('continuous batching', () => {
  it('8 concurrent requests share the batch (the queue shows them running together) and each gets its greedy reference', async () => {
    const seen: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const m = await call(s, '/metrics');
        seen.push(Number(/^vllm:num_requests_running\{[^}]*\} (\d+)$/m.exec(m.text)![1]));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const results = await Promise.all(PROMPTS.map((p) => call(s, '/v1/completions', body(p, 20, { n: 2 }))));
    polling = false;
    await poll;
    expect(Math.max(...seen)).toBeGreaterThan(1);
    results.forEach((r, i) => {
      const ref = greedyReference(s.model, s.tokenizer.encode(PROMPTS[i]!), 20, undefined, new Set([s.tokenizer.specialId('<|im_end|>')!]));
      expect(tokensOf(r), PROMPTS[i]).toEqual([ref, ref]);
    });
  });

  it('a request that arrives while a long one decodes joins its batch and finishes first', async () => {
    const order: string[] = [];
    const res = await fetch(`${s.server.url}/completions`, {
      method: 'POST',
      body: JSON.stringify(body('Tom has 80 stones.', 200, { stream: true, ignore_eos: true })),
    });
    const reader = res.body!.getReader();
    await reader.read(); // the long one is decoding
    const short = call(s, '/v1/completions', body('Ann has 12 apples.', 3)).then((r) => {
      order.push('short');
      return r;
    });
    const long = (async () => {
      for (;;) if ((await reader.read()).done) break;
      order.push('long');
    })();
    await Promise.all([short, long]);
    expect(order).toEqual(['short', 'long']);
    expect(tokensOf(await short)[0]).toEqual(
      greedyReference(s.model, s.tokenizer.encode('Ann has 12 apples.'), 3, undefined, new Set([s.tokenizer.specialId('<|im_end|>')!])),
    );
  });

  it('a client that disconnects leaves the batch; the others get their results; nothing leaks', async () => {
    await call(s, '/v1/completions', body('Ann', 2));
    const before = tf.memory().numTensors;
    const ac = new AbortController();
    const gone = fetch(`${s.server.url}/completions`, {
      method: 'POST',
      body: JSON.stringify(body('Tom has 80 stones.', 200, { ignore_eos: true, n: 4 })),
      signal: ac.signal,
    });
    const kept = call(s, '/v1/completions', body('Ben has 3 cats.', 30, { ignore_eos: true }));
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    await expect(gone).rejects.toThrow();
    const r = await kept;
    expect(tokensOf(r)[0]).toEqual(greedyReference(s.model, s.tokenizer.encode('Ben has 3 cats.'), 30));
    // the queue is idle again and its cache freed
    for (let i = 0; i < 100 && /^vllm:num_requests_running\{[^}]*\} [1-9]/m.test((await call(s, '/metrics')).text); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(tf.memory().numTensors).toBe(before);
  });
});
