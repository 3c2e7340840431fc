import { afterEach, describe, expect, it } from 'vitest';
import { CoreError, FINISH_CODES, getSpans, totalTokens } from '@rlvr/core';
import { sampleGroups } from './sample-groups.js';
import { httpSampler } from './http-sampler.js';
import { vocabFromJson } from '../spans/vocab.js';
import { RolloutError } from '../errors.js';
import type { Logger } from '@rlvr/core';
import type { PromptSamples, Sampler, SampleRequest } from './sampler.js';
import { FAKE_VOCAB, fakeGeneration, fakeLogprob, startFakeVllm, type FakeVllm } from '../test-utils/fake-vllm.js';

const vocab = vocabFromJson(FAKE_VOCAB);
const servers: FakeVllm[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function fake(opts: Parameters<typeof startFakeVllm>[0] = {}) {
  const s = await startFakeVllm(opts);
  servers.push(s);
  return s;
}
const FAST = { timeoutMs: 3000, maxRetries: 1, backoffBaseMs: 1, backoffMaxMs: 5 };
const prompts = [{ tokens: [11, 12] }, { tokens: [13] }, { tokens: [14, 15, 16] }];

/** Expected spans of a double's generation, read off its token ids directly. */
function expectedSpans(ids: number[]) {
  const o = ids.indexOf(1);
  const k = ids.indexOf(2);
  return o < 0 || k < 0 ? null : { open: [o, o + 1], content: [o + 1, k], close: [k, k + 1] };
}

describe('sampleGroups over the HTTP sampler (vLLM protocol double)', () => {
  it('lays G completions per prompt out as a RolloutBatch with log-probs, finish reasons, spans and texts', async () => {
    const s = await fake();
    const sampler = httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST }, { tokenBytes: vocab });
    const { batch, texts, errors } = await sampleGroups(prompts, sampler, { groupSize: 4, maxNewTokens: 64, seed: 9, topK: 50 });
    expect(batch.numRollouts).toBe(12);
    expect(Array.from(batch.groupIndex)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    const seeds = s.requests.map((r) => r.body.seed as number);
    expect(new Set(seeds).size).toBe(3);
    expect(s.requests.every((r) => r.body.n === 4 && r.body.top_k === 50)).toBe(true);
    const bySeed = new Map(s.requests.map((r) => [r.key, r.body.seed as number]));
    for (let i = 0; i < 12; i++) {
      const g = Math.floor(i / 4);
      const key = JSON.stringify(prompts[g]!.tokens);
      const want = fakeGeneration(key, bySeed.get(key)!, i % 4).ids;
      const c0 = batch.completionOffsets[i]!;
      const c1 = batch.completionOffsets[i + 1]!;
      expect(Array.from(batch.completionTokens.subarray(c0, c1))).toEqual(want);
      expect(Array.from(batch.behaviorLogprobs!.subarray(c0, c1))).toEqual(want.map((id, t) => fakeLogprob(id, t)));
      expect(Array.from(batch.promptTokens.subarray(batch.promptOffsets[i]!, batch.promptOffsets[i + 1]!))).toEqual(prompts[g]!.tokens);
      expect(batch.finish[i]).toBe(FINISH_CODES.stop);
      expect(getSpans(batch, i)).toEqual(expectedSpans(want));
      expect(texts[i]).toMatch(new RegExp(`The answer is \\\\boxed\\{${fakeGeneration(key, bySeed.get(key)!, i % 4).answer}\\}\\.$`));
      expect(errors[i]).toBeNull();
    }
    expect(Array.from(batch.rewards)).toEqual(new Array(12).fill(0));
  });

  it('is deterministic under the run seed', async () => {
    const s = await fake();
    const sampler = httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST });
    const a = await sampleGroups(prompts, sampler, { groupSize: 2, maxNewTokens: 64, seed: 1 });
    const b = await sampleGroups(prompts, sampler, { groupSize: 2, maxNewTokens: 64, seed: 1 });
    const c = await sampleGroups(prompts, sampler, { groupSize: 2, maxNewTokens: 64, seed: 2 });
    expect(b.batch).toEqual(a.batch);
    expect(c.batch.completionTokens).not.toEqual(a.batch.completionTokens);
  });

  it('marks truncated completions "length" (no span when the box is cut) and failed requests "error", dropping none', async () => {
    const s = await fake({ fault: (key) => (key === '[13]' ? '503' : undefined) });
    const warnings: string[] = [];
    const logger: Logger = { info: () => undefined, warn: (m) => warnings.push(m) };
    const sampler = httpSampler({ baseUrl: s.url, model: 'fake-model', ...FAST }, { tokenBytes: vocab });
    const { batch, errors, texts } = await sampleGroups(prompts, sampler, { groupSize: 3, maxNewTokens: 3, seed: 4 }, { logger });
    expect(batch.numRollouts).toBe(9);
    for (let i = 0; i < 9; i++) {
      const len = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
      if (i >= 3 && i < 6) {
        expect(batch.finish[i]).toBe(FINISH_CODES.error);
        expect(len).toBe(0);
        expect(errors[i]).toMatch(/HTTP 503/);
        expect(texts[i]).toBe('');
      } else {
        expect(len).toBeLessThanOrEqual(3);
        if (batch.finish[i] === FINISH_CODES.length) expect(len).toBe(3);
        expect(errors[i]).toBeNull();
      }
      if (
        len <= 3 &&
        !Array.from(batch.completionTokens.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!)).includes(2)
      ) {
        expect(getSpans(batch, i)).toBeNull();
      }
    }
    expect(warnings).toEqual(['3 of 9 rollouts failed and are marked "error"']);
  });

  it('leaves spans at -1 without token bytes', async () => {
    const s = await fake();
    const { batch } = await sampleGroups(prompts, httpSampler({ baseUrl: s.url, model: 'fake-model' }), { groupSize: 1, maxNewTokens: 64 });
    expect(Array.from(batch.spans).every((x) => x === -1)).toBe(true);
    // token bytes given in the context are used
    const withBytes = await sampleGroups(
      prompts,
      httpSampler({ baseUrl: s.url, model: 'fake-model' }),
      { groupSize: 1, maxNewTokens: 64 },
      { tokenBytes: vocab },
    );
    expect(getSpans(withBytes.batch, 0)).not.toBeNull();
  });

  it('returns an empty batch for no prompts', async () => {
    const s = await fake();
    const { batch, texts } = await sampleGroups([], httpSampler({ baseUrl: s.url, model: 'fake-model' }), {
      groupSize: 4,
      maxNewTokens: 8,
    });
    expect(batch.numRollouts).toBe(0);
    expect(Array.from(batch.completionOffsets)).toEqual([0]);
    expect(texts).toEqual([]);
    expect(s.requests).toHaveLength(0);
  });

  it('refuses text-only samples (an HTTP sampler with returns "text"): a rollout batch needs the token ids', async () => {
    const s = await fake();
    const text = httpSampler({ baseUrl: s.url, model: 'fake-model', returns: 'text', ...FAST });
    const err = await sampleGroups(prompts, text, { groupSize: 2, maxNewTokens: 64 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RolloutError);
    expect((err as RolloutError).message).toMatch(
      /sampler http:completions: prompt 0: the completions carry 0 token ids of the \d+ sampled: a rollout batch needs them \(an HTTP sampler needs returns "tokens"\)$/,
    );
    expect((err as RolloutError).location).toEqual({ rollout: 0, field: 'completionTokens' });
  });

  it('rejects bad options before any request', async () => {
    const s = await fake();
    const sampler = httpSampler({ baseUrl: s.url, model: 'fake-model' });
    await expect(sampleGroups(prompts, sampler, { groupSize: 0, maxNewTokens: 8 })).rejects.toThrow(/groupSize/);
    await expect(sampleGroups(prompts, sampler, { groupSize: 2, maxNewTokens: 8, topP: 0 })).rejects.toBeInstanceOf(CoreError);
    await expect(sampleGroups(prompts, sampler, { groupSize: 2, maxNewTokens: 8, spans: { which: 'middle' as 'last' } })).rejects.toThrow(
      /spans\.which/,
    );
    expect(s.requests).toHaveLength(0);
  });
});

describe('sampleGroups: the sampler contract is checked', () => {
  /** A hand-written sampler (the interface is public: users bring their own). */
  function sampler(f: (reqs: readonly SampleRequest[]) => PromptSamples[], tokenBytes?: typeof vocab): Sampler {
    return { name: 'custom', sample: async (reqs) => f(reqs), ...(tokenBytes ? { tokenBytes } : {}) };
  }
  const ok = (n: number): PromptSamples => ({
    promptTokens: [1],
    completions: Array.from({ length: n }, () => ({ tokens: [1, 5, 2, 0], logprobs: [-1, -1, -1, -1], finish: 'stop' as const })),
  });

  it('decodes text from token bytes when the sampler gives none', async () => {
    const { batch, texts } = await sampleGroups(
      [{ tokens: [1] }],
      sampler((r) => r.map((x) => ok(x.n)), vocab),
      { groupSize: 2, maxNewTokens: 8 },
    );
    expect(texts).toEqual(['\\boxed{2}', '\\boxed{2}']);
    expect(totalTokens(batch)).toBe(8);
    expect(getSpans(batch, 1)).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
  });

  it('omits behaviorLogprobs (with a warning) when some completion lacks them', async () => {
    const warnings: string[] = [];
    const s = sampler((r) =>
      r.map((x) => ({
        promptTokens: [],
        completions: ok(x.n).completions.map((c, j) => (j === 0 ? { tokens: c.tokens, finish: c.finish } : c)),
      })),
    );
    const { batch } = await sampleGroups(
      [{ tokens: [1] }],
      s,
      { groupSize: 2, maxNewTokens: 8 },
      { logger: { info: () => undefined, warn: (m) => warnings.push(m) } },
    );
    expect(batch.behaviorLogprobs).toBeUndefined();
    expect(warnings[0]).toMatch(/no behaviorLogprobs/);
  });

  it.each([
    ['too few results', (r: readonly SampleRequest[]) => r.slice(1).map((x) => ok(x.n)), /returned 1 results for 2 prompts/],
    ['too few completions', (r: readonly SampleRequest[]) => r.map((x) => ok(x.n - 1)), /prompt 0: returned 2 completions, expected 3/],
    [
      'log-probs of the wrong length',
      (r: readonly SampleRequest[]) =>
        r.map(() => ({ promptTokens: [], completions: [...ok(2).completions, { tokens: [1], logprobs: [], finish: 'stop' as const }] })),
      /rollout 2, field behaviorLogprobs: .*0 log-probs for 1 tokens/,
    ],
    [
      'an error with tokens',
      (r: readonly SampleRequest[]) =>
        r.map(() => ({ promptTokens: [], completions: [...ok(2).completions, { tokens: [1], finish: 'error' as const }] })),
      /a failed completion carries tokens/,
    ],
  ])('throws invalid_response for %s', async (_, f, message) => {
    const err = await sampleGroups([{ tokens: [1] }, { tokens: [2] }], sampler(f), { groupSize: 3, maxNewTokens: 8 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RolloutError);
    expect((err as RolloutError).code).toBe('invalid_response');
    expect((err as Error).message).toMatch(message);
  });
});
