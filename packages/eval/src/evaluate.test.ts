/** `evaluateProblems` grades each sample with its problem's question: the unit it asks decides (docs/grader-contract.md). */
import type { PromptSamples, SampleRequest, Sampler } from '@rlvr/rollout';
import { describe, expect, it } from 'vitest';
import { evaluateProblems } from './evaluate.js';

/** Answers every prompt with the same texts. */
const fixed = (texts: string[]): Sampler => ({
  name: 'fixed',
  sample: async (requests: readonly SampleRequest[]): Promise<PromptSamples[]> =>
    requests.map((r) => ({ promptTokens: [], completions: texts.slice(0, r.n).map((text) => ({ tokens: [1], finish: 'stop', text })) })),
});

describe('evaluateProblems reads the question', () => {
  it('refuses an answer in another unit than the question asks, and grades as before without a question', async () => {
    const sampler = fixed(['so \\boxed{60 inches}', 'so \\boxed{60}']);
    const o = { n: 2, temperature: 1, topP: 1, topK: 0, maxNewTokens: 8 };
    const asked = await evaluateProblems(
      sampler,
      [{ prompt: { text: 'q' }, answer: '60', seed: 1, question: 'How many feet long is it?' }],
      o,
    );
    expect(asked.correct).toEqual([1]);
    const plain = await evaluateProblems(sampler, [{ prompt: { text: 'q' }, answer: '60', seed: 1 }], o);
    expect(plain.correct).toEqual([2]);
  });
});
