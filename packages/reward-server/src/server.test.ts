/**
 * The server over real HTTP on 127.0.0.1 (port 0): OpenRLHF protocol round trips with rewards equal to the
 * in-process `mathReward`, order, details, health, and every 4xx the routes give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { RewardServer } from './server.js';
import { RewardServerError } from './errors.js';
import { body, makeCases } from './test-utils/cases.js';
import { post, send } from './test-utils/http.js';

let server: RewardServer;
let url: string;

beforeAll(async () => {
  server = await RewardServer.start({ port: 0, concurrency: 2 });
  url = server.url;
});
afterAll(() => server.close());

describe('POST /get_reward (OpenRLHF remote reward model)', () => {
  it('answers rewards, scores and per-item extra_logs equal to in-process mathReward, in order', async () => {
    const cases = makeCases(200);
    const r = await post(`${url}/get_reward`, body(cases));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const want = cases.map((c) => mathReward(c.completion, c.gold).reward);
    expect(r.json.rewards).toEqual(want);
    expect(r.json.scores).toEqual(want);
    // hand-checked verdicts (not only agreement with the in-process function)
    cases.forEach((c, i) => {
      if (c.expected !== null) expect([i, r.json.rewards[i]]).toEqual([i, c.expected]);
    });
    expect(Object.keys(r.json.extra_logs).sort()).toEqual(['no_answer', 'prompt_not_found', 'timeout']);
    for (const v of Object.values(r.json.extra_logs) as number[][]) expect(v).toHaveLength(cases.length);
    expect(r.json.extra_logs.no_answer).toEqual(cases.map((c) => (mathReward(c.completion, c.gold).reason === 'no_answer' ? 1 : 0)));
    expect(r.json.extra_logs.prompt_not_found.every((x: number) => x === 0)).toBe(true);
  });

  it("grades with the problem: the request's problems, else the prompt (its last chat user turn); --problem field|off", async () => {
    const chat = (q: string) => `<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n`;
    const feet = chat('A rope is 20 yards long. How many feet long is it?');
    const req = {
      query: [feet + '\\boxed{60 inches}', feet + '\\boxed{60}', '\\boxed{60 inches}', '\\boxed{60 inches}', '\\boxed{3.14}'],
      prompts: [feet, feet, '', '', ''],
      labels: ['60', '60', '60', '60', '\\pi'],
      problems: [null, null, 'How many feet long is it?', null, 'Round to the nearest hundredth.'],
    };
    const r = await post(`${url}/get_reward?details=1`, req);
    expect(r.status).toBe(200);
    expect(r.json.rewards).toEqual([0, 1, 0, 1, 1]);
    expect(r.json.reasons[0]).toBe('unit: the problem asks for foot, the answer is in inch');
    expect(r.json.limits).toEqual([null, null, null, null, null]);
    const field = await RewardServer.start({ port: 0, concurrency: 1, problem: 'field' });
    const off = await RewardServer.start({ port: 0, concurrency: 1, problem: 'off' });
    try {
      expect((await post(`${field.url}/get_reward`, req)).json.rewards).toEqual([1, 1, 0, 1, 1]);
      expect((await post(`${off.url}/get_reward`, req)).json.rewards).toEqual([1, 1, 1, 1, 0]);
    } finally {
      await Promise.all([field.close(), off.close()]);
    }
    const bad = await post(`${url}/get_reward`, { ...req, problems: ['x'] });
    expect([bad.status, bad.json.error.message]).toEqual([
      400,
      'field problems: query has 5 entries but problems has 1; item i of each belongs together',
    ]);
  });

  it('flags an answer over the size or nesting bound in ?details=1 limits', async () => {
    const deep = `\\boxed{${'('.repeat(200)}1${')'.repeat(200)}}`;
    const r = await post(`${url}/get_reward?details=1`, {
      query: [deep, `\\boxed{${'1+'.repeat(60_000)}1}`, '\\boxed{1}'],
      labels: ['1', '1', '1'],
    });
    expect(r.json.rewards).toEqual([0, 0, 1]);
    expect(r.json.limits).toEqual(['depth', 'size', null]);
  });

  it('grades the completion only: a \\boxed answer inside the prompt is not read', async () => {
    const prompt = 'Example: 1+1 = \\boxed{2}. Now: what is 2+2?\n';
    const r = await post(`${url}/get_reward`, {
      query: [prompt + 'it is 4', prompt + '\\boxed{4}'],
      prompts: [prompt, prompt],
      labels: ['2', '4'],
    });
    expect(r.json.rewards).toEqual([0, 1]);
    expect(r.json.extra_logs.no_answer).toEqual([1, 0]);
  });

  it('finds the prompt after left padding or BOS; a query without its prompt is graded whole and flagged', async () => {
    const prompt = 'Q: 2+3?\n';
    const r = await post(`${url}/get_reward?details=1`, {
      query: ['<pad><pad><s>' + prompt + '\\boxed{5}', 'Q:  2+3? (re-tokenized)\n\\boxed{5}', prompt + '\\boxed{6}'],
      prompts: [prompt, prompt, prompt],
      labels: ['5', '5', 5],
    });
    expect(r.status).toBe(200);
    expect(r.json.rewards).toEqual([1, 1, 0]);
    expect(r.json.extra_logs.prompt_not_found).toEqual([0, 1, 0]);
    expect(r.json.extracted).toEqual(['5', '5', '6']);
    expect(r.json.reasons).toHaveLength(3);
  });

  it('accepts a request without prompts (older OpenRLHF) and extra keys; an empty batch answers empty arrays', async () => {
    const r = await post(`${url}/get_reward`, { query: ['\\boxed{7}'], labels: ['7'], datasource: ['math'] });
    expect(r.json.rewards).toEqual([1]);
    const e = await post(`${url}/get_reward`, { query: [], prompts: [], labels: [] });
    expect(e.status).toBe(200);
    expect(e.json).toEqual({ rewards: [], scores: [], extra_logs: { timeout: [], no_answer: [], prompt_not_found: [] } });
  });
});

describe('errors are 4xx JSON that say what is wrong', () => {
  const cases: [string, string | object, number, string, RegExp][] = [
    ['malformed JSON', '{"query": ["a"', 400, 'invalid_json', /not valid JSON/],
    ['an empty body', '', 400, 'invalid_json', /empty/],
    ['a JSON array', '[1, 2]', 400, 'invalid_request', /takes a JSON object.*an array/],
    ['labels missing', { query: ['a'], prompts: [''] }, 400, 'invalid_request', /labels/],
    ['a number in query', { query: [1], prompts: [''], labels: ['1'] }, 400, 'invalid_request', /query\.0/],
    [
      'labels shorter',
      { query: ['a', 'b'], prompts: ['', ''], labels: ['1'] },
      400,
      'length_mismatch',
      /query has 2 entries but labels has 1/,
    ],
    ['prompts longer', { query: ['a'], prompts: ['', ''], labels: ['1'] }, 400, 'length_mismatch', /query has 1 entries but prompts has 2/],
  ];
  it.each(cases)('%s', async (_name, payload, status, code, message) => {
    const r = await post(`${url}/get_reward`, payload);
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(r.json.error.message).toMatch(message);
  });

  it('names the route for unknown paths and the method for wrong ones', async () => {
    const nf = await send(`${url}/reward`, 'POST', '{}');
    expect([nf.status, nf.json.error.code]).toEqual([404, 'not_found']);
    expect(nf.json.error.message).toMatch(/POST \/get_reward/);
    const m = await send(`${url}/get_reward`, 'GET');
    expect([m.status, m.json.error.code, m.headers.allow]).toEqual([405, 'method_not_allowed', 'POST']);
  });

  it('rejects invalid server options naming the field', async () => {
    await expect(RewardServer.start({ port: 0, timeoutMs: 0 })).rejects.toThrow(/timeoutMs/);
    await expect(RewardServer.start({ port: 0, verify: { percent: 'sometimes' } as never })).rejects.toMatchObject({
      code: 'invalid_options',
    });
    await expect(RewardServer.start({ port: server.port })).rejects.toBeInstanceOf(RewardServerError);
  });
});

describe('GET /health', () => {
  it('reports status, pool and counters', async () => {
    const r = await send(`${url}/health`, 'GET');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'ok', concurrency: 2, timeoutMs: 5000 });
    expect(r.json.stats.answers).toBeGreaterThan(200);
    expect(r.json.stats.clientErrors).toBeGreaterThan(5);
    expect(r.json.stats.serverErrors).toBe(0);
  });
});
