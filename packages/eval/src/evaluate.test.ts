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

describe('evaluateProblems: Step-Quality metrics on the problems with a chain', () => {
  /** Answers each prompt text with its scripted completions, `tokens` ids each. */
  const scripted = (by: Record<string, [string, number][]>): Sampler => ({
    name: 'scripted',
    sample: async (requests: readonly SampleRequest[]): Promise<PromptSamples[]> =>
      requests.map((r) => ({
        promptTokens: [],
        completions: by[(r.prompt as { text: string }).text]!.map(([text, n]) => ({ tokens: Array(n).fill(1), finish: 'stop', text })),
      })),
  });
  const A = { start: 2, steps: [{ op: 'add', operand: 3, result: 5 } as const, { op: 'mul', operand: 4, result: 20 } as const] };
  const C = { start: 1, steps: [{ op: 'add', operand: 1, result: 2 } as const] };
  const sampler = scripted({
    a: [
      ['2 + 3 = 5\n5 * 4 = 20\n\\boxed{20}', 5], // right: density 1
      ['2 + 3 = 5\n5 * 4 = 21\n\\boxed{21}', 7], // density 1/2; arithmetic at step 1 of 2
    ],
    c: [
      ['1 + 1 = 3', 3], // density 0; arithmetic at step 0 of 1
      ['1 + 1 = 2\n\\boxed{2}', 4], // density 1
    ],
    plain: [
      ['junk', 1],
      ['\\boxed{9}', 1],
    ],
  });
  const o = { n: 2, temperature: 1, topP: 1, topK: 0, maxNewTokens: 8 };

  it('per problem, then mean ± SE over problems; a problem without a chain does not count', async () => {
    const r = await evaluateProblems(
      sampler,
      [
        { prompt: { text: 'a' }, answer: '20', seed: 1, chain: A },
        { prompt: { text: 'plain' }, answer: '9', seed: 2 },
        { prompt: { text: 'c' }, answer: '2', seed: 3, chain: C },
      ],
      o,
    );
    expect(r.correct).toEqual([1, 1, 1]);
    const q = r.stepQuality!;
    expect(q).toMatchObject({ problems: 2, samples: 4, wrong: 2, noSteps: 0 });
    // densities: a (1 + 1/2) / 2, c (0 + 1) / 2: mean 0.625, SE |0.75 - 0.5| / 2
    expect(q.usefulDensity).toEqual({ mean: 0.625, se: 0.125, problems: 2 });
    expect(q.localised).toEqual({ mean: 1, se: 0, problems: 2 });
    expect(q.errorAt).toEqual({ mean: 0.25, se: 0.25, problems: 2 });
    // tokens (5 + 7) + (3 + 4) over 2 solved; residuals 12 - 9.5, 7 - 9.5: sqrt(12.5 / 2) / 1
    expect(q.tokensPerSolved).toEqual({ value: 9.5, se: 2.5, tokens: 19, solved: 2 });
  });

  it('none without a chain', async () => {
    const r = await evaluateProblems(sampler, [{ prompt: { text: 'plain' }, answer: '9', seed: 2 }], o);
    expect(r.stepQuality).toBeUndefined();
  });
});
