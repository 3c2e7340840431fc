/**
 * Hostile bodies (issues 31 and 32): JSON nested 1e5 deep inside known fields is a 400 naming the
 * depth limit (not a stack overflow's 500), echoed values are cut, big bodies are read in the text
 * thread while the server keeps answering, and a chat template that loops is cut off. Each case
 * runs on both paths: the server's thread (small bodies) and the text thread (`--inline-body-bytes 0`).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, serveTiny, type Served } from '../test-utils/served.js';

let inline: Served;
let threaded: Served;
beforeAll(async () => {
  inline = await serveTiny(['--workers', '1']);
  threaded = await serveTiny(['--workers', '1', '--inline-body-bytes', '0']);
}, 120_000);
afterAll(async () => {
  await inline?.close();
  await threaded?.close();
});

const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const D = deep(100_000);

describe.each([
  ['in the server thread', () => inline],
  ['in the text thread', () => threaded],
])('hostile JSON %s', (_, served) => {
  it('nesting 1e5 deep anywhere is a 400 naming the limit and the field, before any handler', async () => {
    const cases: [string, string, string | null][] = [
      ['/v1/completions', D, null],
      ['/v1/completions', `{"model":"tiny","prompt":${D}}`, 'prompt'],
      ['/v1/completions', `{"model":"tiny","prompt":"a","stop":${D}}`, 'stop'],
      ['/v1/completions', `{"model":"tiny","prompt":"a","logit_bias":{"1":${D}}}`, 'logit_bias.1'],
      ['/v1/chat/completions', `{"model":"tiny","messages":[{"role":"user","content":${D}}]}`, 'messages.0.content'],
      ['/tokenize', `{"prompt":${D}}`, 'prompt'],
      ['/detokenize', `{"tokens":${D}}`, 'tokens'],
    ];
    for (const [route, body, param] of cases) {
      const r = await call(served(), route, body);
      expect([route, r.status, r.json.error.param], body.slice(0, 60)).toEqual([route, 400, param]);
      expect(r.json.error.message).toMatch(/^the body nests arrays and objects deeper than the limit of 64 levels/);
    }
    // 64 levels are fine: the schema answers (a prompt is not a list of lists of lists)
    const ok = await call(served(), '/v1/completions', `{"model":"tiny","prompt":${deep(63)}}`);
    expect([ok.status, ok.json.error.param]).toEqual([400, 'prompt']);
    expect(ok.json.error.message).toMatch(/^invalid request: /);
    expect((await call(served(), '/v1/completions', { model: 'tiny', prompt: 'Ann', max_tokens: 2 })).status).toBe(200);
  });

  it('a 10,000-string stop list is a 400 stating the limit, echoing at most 200 characters of it', async () => {
    const stop = Array.from({ length: 10_000 }, (_, i) => `s${i}`);
    const r = await call(served(), '/v1/completions', { model: 'tiny', prompt: 'a', stop });
    expect([r.status, r.json.error.param]).toEqual([400, 'stop']);
    expect(r.json.error.message).toBe(
      `invalid request: stop: at most 64 stop strings, not 10000 (got ${JSON.stringify(stop).slice(0, 200)}…)`,
    );
    // a 1 MB model name, an unknown 1 MB key: cut as well
    const name = 'm'.repeat(1_000_000);
    const m = await call(served(), '/v1/completions', { model: name, prompt: 'a' });
    expect([m.status, m.json.error.message]).toEqual([404, `The model \`${'m'.repeat(200)}…\` does not exist.`]);
    const k = await call(served(), '/v1/completions', { model: 'tiny', prompt: 'a', [name]: 1 });
    expect(k.json.error.message).toBe(
      `unknown parameter ${'m'.repeat(200)}… (rlvr-serve refuses what it does not implement; see docs/serve.md)`,
    );
    expect(k.json.error.param.length).toBe(201);
  });

  it('__proto__ keys are refused as unknown parameters, not merged', async () => {
    const r = await call(served(), '/v1/completions', '{"model":"tiny","prompt":"a","__proto__":{"max_tokens":1000}}');
    expect([r.status, r.json.error.param]).toEqual([400, '__proto__']);
    const t = await call(served(), '/tokenize', '{"prompt":"a","__proto__":{"x":1}}');
    expect([t.status, t.json.error.param]).toEqual([400, '__proto__']);
  });
});

describe('the text thread', () => {
  it('answers /tokenize, /detokenize, completions and chat exactly as the server thread does', async () => {
    const bodies: [string, unknown][] = [
      ['/tokenize', { prompt: 'Ann has 12 apples. <|im_end|>', return_token_strs: true }],
      ['/tokenize', { messages: [{ role: 'user', content: 'Tom has 80 stones.' }] }],
      ['/detokenize', { tokens: [1, 2, 3, 40, 41] }],
      ['/v1/completions', { model: 'tiny', prompt: ['Ann has', 'Tom has'], max_tokens: 6, temperature: 0, logprobs: 1 }],
      ['/v1/completions', { model: 'tiny', prompt: 'Ann has', max_tokens: 6, seed: 3, stop: ['e'], n: 2 }],
      ['/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'Ann?' }], max_tokens: 5, temperature: 0 }],
      ['/v1/completions', { model: 'tiny', prompt: 'x'.repeat(5000), max_tokens: 6 }],
    ];
    const strip = (j: any) => ({ ...j, id: undefined, created: undefined });
    for (const [route, body] of bodies) {
      const [a, b] = [await call(inline, route, body), await call(threaded, route, body)];
      expect([route, b.status], JSON.stringify(b.json)).toEqual([route, a.status]);
      expect(strip(b.json)).toEqual(strip(a.json));
    }
  });

  it('/health answers while a 16 MB /tokenize is being tokenized', { timeout: 300_000 }, async () => {
    const body = JSON.stringify({ prompt: 'Ann has 12 apples. '.repeat(16e6 / 19) });
    let tokenized = false;
    const big = new Promise<{ status: number; count: number }>((resolve, reject) => {
      const req = request(
        `${threaded.origin}/tokenize`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            tokenized = true;
            const j = JSON.parse(Buffer.concat(chunks).toString());
            resolve({ status: res.statusCode!, count: j.count ?? j.error?.message });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    // wait until the text thread holds it, then ask for /health: it must come back first
    for (;;) {
      const m = await call(threaded, '/metrics');
      if (/^rlvr:text_thread_pending\{[^}]*\} 1$/m.test(m.text)) break;
      if (tokenized) throw new Error('the /tokenize finished before it was seen in the text thread');
      await new Promise((r) => setTimeout(r, 5));
    }
    const health = await call(threaded, '/health');
    const healthFirst = !tokenized;
    expect([health.status, healthFirst]).toEqual([200, true]);
    const r = await big;
    expect([r.status, typeof r.count], String(r.count)).toEqual([200, 'number']);
    expect(r.count).toBeGreaterThan(1e6);
  });

  it('a chat template that loops is cut off at --text-timeout-ms with a 400; the next body gets a fresh thread', async () => {
    const loop = '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}';
    // a template the request brings runs in the text thread, whatever the body's size (this body is small)
    const s = await serveTiny(['--workers', '1', '--text-timeout-ms', '2000']);
    const t = await call(s, '/v1/chat/completions', {
      model: 'tiny',
      messages: [{ role: 'user', content: 'hi' }],
      chat_template: loop,
      max_tokens: 1,
    });
    expect([t.status, t.json.error.message]).toEqual([
      400,
      'reading the request (parse, chat template, tokenizer) took longer than the limit of 2000 ms',
    ]);
    const after = await call(s, '/v1/chat/completions', {
      model: 'tiny',
      messages: [{ role: 'user', content: 'hi' }],
      chat_template: '{{ messages[0].content }}',
      max_tokens: 1,
      return_token_ids: true,
    });
    await s.close();
    expect(after.status, after.text).toBe(200);
    expect(after.json.prompt_token_ids).toEqual(inline.tokenizer.encode('hi'));
  }, 180_000);
});
