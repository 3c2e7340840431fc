import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProcessScoreError } from './errors.js';
import type { StepCompletion } from './steps.js';
import { STEP_TAG, startPrmServer, stepScore, type PrmServer } from './test-utils/prm-server.js';
import { questionOf, segmentSteps, vllmPrm } from './vllm-prm.js';

const enc = (s: string) => new TextEncoder().encode(s);
/** A completion whose tokens are `text`'s bytes cut at `cuts` (byte offsets, may fall inside a character). */
const cutAt = (text: string, cuts: number[], question: string): StepCompletion => {
  const bytes = enc(text);
  const at = [0, ...cuts, bytes.length];
  return { tokenBytes: at.slice(1).map((e, k) => bytes.slice(at[k]!, e)), question };
};

// tokens: "Step one: 2 + 3 = 5" | ".\n" | "\nStep two" | ": 5 * 2 = 10\n\n" | "So \boxed{10}" (the first
// separator falls inside token 2, the second ends token 3)
const ARITH = cutAt('Step one: 2 + 3 = 5.\n\nStep two: 5 * 2 = 10\n\nSo \\boxed{10}', [19, 21, 30, 44], 'What is (2+3)*2?');
// "é" is 2 bytes and token 0 ends between them; the separator falls inside token 2
const FRENCH = cutAt('Le résultat: 1 + 1 = 2\n\nDonc \\boxed{2}', [5, 24, 30], 'Combien font 1 + 1 ?');
const BLANK = cutAt('\n\n  \n\n', [2], 'Nothing?');

const PROMPT = (question: string, steps: string[]) =>
  '<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n' +
  `<|im_start|>user\n${question}<|im_end|>\n<|im_start|>assistant\n${steps.map((s) => s + STEP_TAG).join('')}<|im_end|>\n`;

let server: PrmServer;
beforeAll(async () => {
  server = await startPrmServer();
});
afterAll(() => server.close());
afterEach(() => {
  server.mode = 'ok';
  server.failOn = null;
  server.received.length = 0;
  server.maxInFlight = 0;
});

const scorer = (extra: Record<string, unknown> = {}) => vllmPrm({ url: server.url, model: server.model, ...extra });

describe('vllmPrm against a local server speaking vLLM pooling protocol', () => {
  it('sends each completion as the model card builds it, and each step score lands on its byte-exact token span', async () => {
    const [arith, french, blank] = await scorer().score([ARITH, FRENCH, BLANK]);
    // one request per completion with a step (none for the blank one), the text as the model card builds it
    expect(server.received.map((r) => r.input).sort()).toEqual(
      [
        PROMPT('What is (2+3)*2?', ['Step one: 2 + 3 = 5.', 'Step two: 5 * 2 = 10', 'So \\boxed{10}']),
        PROMPT('Combien font 1 + 1 ?', ['Le résultat: 1 + 1 = 2', 'Donc \\boxed{2}']),
      ].sort(),
    );
    expect(server.received.every((r) => r.model === 'Qwen/Qwen2.5-Math-PRM-7B' && r.task === undefined)).toBe(true);
    expect(arith).toEqual([
      { bytes: [0, 30], tokens: [0, 3], score: stepScore('Step one: 2 + 3 = 5.') },
      { bytes: [30, 44], tokens: [3, 4], score: stepScore('Step two: 5 * 2 = 10') },
      { bytes: [44, 57], tokens: [4, 5], score: stepScore('So \\boxed{10}') },
    ]);
    expect(french).toEqual([
      { bytes: [0, 30], tokens: [0, 3], score: stepScore('Le résultat: 1 + 1 = 2') },
      { bytes: [30, 39], tokens: [3, 4], score: stepScore('Donc \\boxed{2}') },
    ]);
    expect(blank).toEqual([]);
    // the scores differ per step, so a shifted mapping would show
    expect(new Set(arith!.map((s) => s.score)).size).toBe(3);
  });

  it('keeps at most `concurrency` requests in flight, sends `task` when set, and a custom template and separator', async () => {
    const many = Array.from({ length: 6 }, (_, i) => cutAt(`a${i} | b${i}`, [2, 5], `q${i}`));
    const steps = await scorer({ concurrency: 2, task: 'token_classify', separator: ' | ', template: '{question}::{steps}' }).score(many);
    expect(server.maxInFlight).toBeLessThanOrEqual(2);
    expect(server.received.map((r) => r.input).sort()).toEqual(many.map((_, i) => `q${i}::a${i}${STEP_TAG}b${i}${STEP_TAG}`).sort());
    expect(server.received.every((r) => r.task === 'token_classify')).toBe(true);
    // the custom template has no assistant turn: the server scores the text before each tag from the start
    steps.forEach((s, i) => {
      expect(s.map((x) => x.tokens)).toEqual([
        [0, 2],
        [2, 3],
      ]);
      expect(s[1]!.score).toBe(stepScore(`b${i}`));
    });
  });

  it('a 500 is an http error naming the rollout, the status and the body', async () => {
    server.mode = 'status500';
    server.failOn = 'Combien';
    const err = await scorer()
      .score([ARITH, FRENCH])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessScoreError);
    expect((err as ProcessScoreError).code).toBe('http');
    expect((err as ProcessScoreError).location.rollout).toBe(1);
    expect((err as Error).message).toMatch(/^rollout 1: http:\/\/127\.0\.0\.1:\d+\/pooling answered HTTP 500: .*CUDA out of memory/);
  });

  it('a malformed body is a bad_response error naming the rollout', async () => {
    server.mode = 'malformed';
    const err = (await scorer()
      .score([BLANK, ARITH])
      .catch((e: unknown) => e)) as ProcessScoreError;
    expect(err).toBeInstanceOf(ProcessScoreError);
    expect(err.code).toBe('bad_response');
    expect(err.message).toContain('rollout 1, field body:');
    expect(err.message).toContain('a body that is not JSON: {"object": "list", "data": [');
  });

  it('another number of step scores than steps sent is a step_count error naming the rollout', async () => {
    server.mode = 'extraStep';
    server.failOn = 'What is';
    const err = (await scorer()
      .score([FRENCH, BLANK, ARITH])
      .catch((e: unknown) => e)) as ProcessScoreError;
    expect(err.code).toBe('step_count');
    expect(err.location).toEqual({ rollout: 2, field: 'data' });
    expect(err.message).toContain('scored 4 steps but the request has 3');
  });

  it('a server that never answers is ended by the timeout: a timeout error naming the rollout', async () => {
    server.mode = 'silent';
    server.failOn = 'Combien';
    // the silent request is the only one: a slow machine cannot time out another first
    const err = (await scorer({ timeoutMs: 300 })
      .score([BLANK, FRENCH])
      .catch((e: unknown) => e)) as ProcessScoreError;
    expect(err).toBeInstanceOf(ProcessScoreError);
    expect(err.code).toBe('timeout');
    expect(err.location.rollout).toBe(1);
    expect(err.message).toContain('within 300 ms (timeoutMs)');
  });

  it('a refused connection is a network error; a wrong model is the server error it answers', async () => {
    const closed = await startPrmServer();
    const url = closed.url;
    await closed.close();
    const refused = (await vllmPrm({ url, model: 'm' })
      .score([ARITH])
      .catch((e: unknown) => e)) as ProcessScoreError;
    expect(refused.code).toBe('network');
    expect(refused.location.rollout).toBe(0);
    const wrong = (await vllmPrm({ url: server.url, model: 'other' })
      .score([ARITH])
      .catch((e: unknown) => e)) as ProcessScoreError;
    expect(wrong.code).toBe('http');
    expect(wrong.message).toContain('HTTP 404: {"object":"error","message":"The model `other` does not exist."');
  });

  it('bad options are refused before any request', () => {
    expect(() => vllmPrm({ url: 'localhost:8000', model: 'm' })).toThrow(/url/);
    expect(() => vllmPrm({ url: server.url, model: 'm', template: '{question}' })).toThrow('must contain {steps}');
    expect(() => vllmPrm({ url: server.url, model: 'm', timeout: 5 } as never)).toThrow(/timeout/);
  });
});

describe('segmentSteps and questionOf', () => {
  it('cuts after each separator, skips blank pieces, keeps multi-byte text whole', () => {
    expect(segmentSteps(Buffer.from('\n\nA é\n\n\n\nB\n\n  '), '\n\n')).toEqual([
      { text: 'A é', cut: 8 },
      { text: 'B', cut: 13 },
    ]);
    expect(segmentSteps(Buffer.from('only'), '\n\n')).toEqual([{ text: 'only', cut: 4 }]);
  });

  it('the problem is the last user turn of ChatML or of the plain template, else the whole prompt', () => {
    expect(questionOf('<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nWhat is 2 + 3? Think.<|im_end|>\n<|im_start|>assistant\n')).toBe(
      'What is 2 + 3? Think.',
    );
    expect(questionOf('System: be brief\n\nUser: What is 2 + 3?\nPlease.\n\nAssistant:\n')).toBe('What is 2 + 3?\nPlease.');
    expect(questionOf('  2 + 3 = ?  ')).toBe('2 + 3 = ?');
  });
});
