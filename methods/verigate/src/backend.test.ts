import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { batchFromRows } from '@rlvr/core';
import { loadTokenizer, type Qwen3Model } from '@rlvr/policy';
import { defineBackend } from '@rlvr/saliency';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processStepsBackend } from './backend.js';
import { ProcessScoreError } from './errors.js';
import { startPrmServer, stepScore, type PrmServer } from './test-utils/prm-server.js';

const backend = processStepsBackend(defineBackend);
const ASSETS = join(dirname(createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json')), 'assets');
const WARMUP = join(ASSETS, 'warmup');
const LONG = join(ASSETS, 'warmup-long-chain-960');

let server: PrmServer;
beforeAll(async () => {
  server = await startPrmServer();
});
afterAll(() => server.close());

describe('the process-steps backend', () => {
  it('parses its scorer and the vLLM options strictly, naming the field', () => {
    expect(backend.parseConfig({})).toEqual({ scorer: 'arithmetic' });
    expect(() => backend.parseConfig({ url: 'http://127.0.0.1:1' })).toThrow('url: is an option of scorer "vllm" only');
    expect(() => backend.parseConfig({ scorer: 'vllm', model: 'm' })).toThrow(/url/);
    expect(() => backend.parseConfig({ scorer: 'vllm', url: server.url })).toThrow(/model/);
    expect(() => backend.parseConfig({ scorer: 'vllm', url: server.url, model: 'm', timeout: 5 })).toThrow(/timeout/);
    expect(() => backend.parseConfig({ scorer: 'prm' })).toThrow(/scorer/);
    expect(backend.parseConfig({ scorer: 'vllm', url: server.url, model: 'm', timeoutMs: 5000 })).toMatchObject({ timeoutMs: 5000 });
  });

  it('scorer vllm: the question from the decoded prompt, each step score at its token end in process.steps', async () => {
    const tok = loadTokenizer(WARMUP);
    const completion = 'Step 1: 2 + 3 = 5\n\nStep 2: 5 * 4 = 20\n\nSo \\boxed{20}';
    const prompt = 'User: What is (2 + 3) * 4?\n\nAssistant:\n';
    const ids = tok.encode(completion);
    const batch = batchFromRows([
      { group: 0, reward: 1, prompt: tok.encode(prompt), completion: ids },
      { group: 0, reward: 1, prompt: tok.encode(prompt), completion: [] },
    ]);
    const config = { scorer: 'vllm', url: server.url, model: server.model, tokenizer: WARMUP };
    // a model backend (the signal step finds producers among those), but the model is never read
    const result = await backend.compute({} as Qwen3Model, batch, config);
    expect(server.received).toHaveLength(1); // the empty completion sends nothing
    expect(server.received[0]!.input).toContain('<|im_start|>user\nWhat is (2 + 3) * 4?<|im_end|>');
    // each step's token end: the first token whose bytes reach past the step's separator
    const ends: number[] = [];
    let b = 0;
    for (const id of ids) {
      b += tok.tokenBytes(id).length;
      ends.push(b);
    }
    const cut = (s: string) => Buffer.byteLength(completion.slice(0, completion.indexOf(s) + s.length));
    const tokenEnd = (byte: number) => ends.findIndex((e) => e >= byte) + 1;
    const steps = [
      ['Step 1: 2 + 3 = 5', cut('Step 1: 2 + 3 = 5\n\n')],
      ['Step 2: 5 * 4 = 20', cut('Step 2: 5 * 4 = 20\n\n')],
      ['So \\boxed{20}', Buffer.byteLength(completion)],
    ] as const;
    expect(result.width).toBe(6);
    expect(Array.from(result.scores.subarray(0, 6))).toEqual(steps.flatMap(([text, c]) => [tokenEnd(c), Math.fround(stepScore(text))]));
    expect(Array.from(result.scores.subarray(6))).toEqual([-1, 0, -1, 0, -1, 0]);
  });

  it('another policy: refused up front without its tokenizer; decoded right with it; a foreign id names its rollout', async () => {
    // the long-chain warm-up: 465 tokens, where the embedded warm-up's tokenizer has 408 (its id 462 is "boxed")
    const long = loadTokenizer(LONG);
    const policy = { config: JSON.parse(readFileSync(join(LONG, 'config.json'), 'utf8')) } as Qwen3Model;
    const completion = '4 7 + 2 5 = 7 2\n7 2 * 2 = 1 4 3\n\\boxed{1 4 3}';
    const ids = long.encode(completion);
    expect(Math.max(...ids)).toBeGreaterThanOrEqual(408);
    const batch = batchFromRows([
      { group: 0, reward: 0, prompt: long.encode('What is 47 + 25, times 2?'), completion: long.encode('4 7 + 2 5 = 7 2') },
      { group: 0, reward: 0, prompt: long.encode('What is 47 + 25, times 2?'), completion: ids },
    ]);
    const refused = await backend.compute(policy, batch, {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProcessScoreError);
    expect(refused).toMatchObject({ code: 'tokenizer', location: { field: 'saliency.process-steps.tokenizer' } });
    expect((refused as Error).message).toBe(
      `field saliency.process-steps.tokenizer: the policy has 465 vocabulary rows, the default tokenizer (the embedded warm-up's, ${WARMUP}) ` +
        "408 tokens: set it to the policy's checkpoint directory",
    );
    // with the policy's tokenizer: the first step holds (score 1), the second does not (72 * 2 = 144, not 143);
    // each step ends at the token that ends its result
    const { scores, width } = await backend.compute(policy, batch, { tokenizer: LONG });
    const ends = (text: string) => long.encode(text).length;
    expect(width).toBe(4);
    expect(Array.from(scores)).toEqual([
      ...[ends('4 7 + 2 5 = 7 2'), 1, -1, 0],
      ...[ends('4 7 + 2 5 = 7 2'), 1, ends('4 7 + 2 5 = 7 2\n7 2 * 2 = 1 4 3'), 0],
    ]);
    // a tokenizer named by hand is trusted up front, but an id past its vocabulary is named where it is
    const foreign = await backend.compute(policy, batch, { tokenizer: WARMUP }).catch((e: unknown) => e);
    expect(foreign).toMatchObject({ code: 'tokenizer', location: { rollout: 1, field: 'saliency.process-steps.tokenizer' } });
    expect((foreign as Error).message).toContain(
      `completion token ${ids.indexOf(462)} is id 462, past the 408 tokens of tokenizer ${WARMUP}`,
    );
  });
});
