import { describe, expect, it } from 'vitest';
import { batchToRows, validateBatch, type BoundRolloutStage, type ScoredGroup } from '@rlvr/core';
import { resampleGroups, type ResampleProblem } from './resample.js';
import { sampleGroups } from './sample-groups.js';
import type { Sampler } from './sampler.js';

/**
 * A deterministic sampler: completion j of a request answers with the prompt's last token plus j and the
 * request seed's low byte, as text "<last>:<j>", log-prob -0.5 per token. It records the prompts it saw.
 */
function recordingSampler(): Sampler & { seen: number[][]; seeds: number[] } {
  const seen: number[][] = [];
  const seeds: number[] = [];
  return {
    name: 'recording',
    seen,
    seeds,
    sample: async (requests) =>
      requests.map((r) => {
        const tokens = [...(r.prompt.tokens ?? [])];
        seen.push(tokens);
        seeds.push(r.params.seed);
        const last = tokens.at(-1)!;
        return {
          promptTokens: tokens,
          completions: Array.from({ length: r.n }, (_, j) => ({
            tokens: [last, j, r.params.seed & 0xff],
            logprobs: [-0.5, -0.5, -0.5],
            finish: 'stop' as const,
            text: `${last}:${j}`,
          })),
        };
      }),
  };
}

const problems: ResampleProblem[] = [
  { question: 'q0', answer: '0', prompt: [1, 100], aux: { scaffold: { hint: 'h0' } } } as ResampleProblem,
  { question: 'q1', answer: '1', prompt: [1, 101] } as ResampleProblem,
  {
    question: 'q2',
    answer: '2',
    prompt: [1, 102],
    aux: { scaffold: { hint: 'h2' } },
    source: { file: 'f.jsonl', line: 3 },
  } as ResampleProblem,
];
const options = { groupSize: 2, maxNewTokens: 4, seed: 7 };
// the scaffolded prompt of a problem is its hint rendered as [9, 9, 200 + group]
const render = (question: string) => [9, 9, 200 + Number(question.slice(-1))];

async function firstSample(sampler: Sampler) {
  const s = await sampleGroups(
    problems.map((p) => ({ tokens: (p as unknown as { prompt: number[] }).prompt })),
    sampler,
    options,
  );
  // group 0 all wrong, group 1 all right, group 2 half right
  s.batch.rewards.set([0, 0, 1, 1, 1, 0]);
  return s;
}

/** Routes every group with a scaffold whose mean reward is below 0.5, grading a new completion 0.25 + its index / 2. */
const stage = (seen: ScoredGroup[] = []): BoundRolloutStage => ({
  method: 'test-router',
  route: (groups) => {
    seen.push(...groups);
    return groups
      .filter((g) => g.aux !== undefined && g.rewards.reduce((a, b) => a + b, 0) / g.rewards.length < 0.5)
      .map((g) => ({ group: g.group, question: `scaffolded ${g.group}` }));
  },
  grade: (text) => 0.25 + Number(text.split(':')[1]) / 2,
});

describe('resampleGroups', () => {
  it('re-samples the routed groups with the same sampler and group size, grades them, and puts them in place', async () => {
    const sampler = recordingSampler();
    const first = await firstSample(sampler);
    const seen: ScoredGroup[] = [];
    const out = await resampleGroups(stage(seen), first, problems, sampler, options, render);
    // the stage saw each group once, with its problem, aux, source, rewards and texts
    expect(seen.map((g) => [g.group, g.question, g.aux, g.source, Array.from(g.rewards), g.texts])).toEqual([
      [0, 'q0', { scaffold: { hint: 'h0' } }, undefined, [0, 0], ['100:0', '100:1']],
      [1, 'q1', undefined, undefined, [1, 1], ['101:0', '101:1']],
      [2, 'q2', { scaffold: { hint: 'h2' } }, { file: 'f.jsonl', line: 3 }, [1, 0], ['102:0', '102:1']],
    ]);
    expect(out.routed).toEqual([0]);
    expect(out.routedQuestions).toEqual(['scaffolded 0']);
    expect(sampler.seen.slice(3)).toEqual([[9, 9, 200]]); // one request, the scaffolded prompt
    validateBatch(out.batch);
    const rows = batchToRows(out.batch);
    expect(rows.map((r) => r.group)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(rows.map((r) => r.prompt)).toEqual([
      [9, 9, 200],
      [9, 9, 200],
      [1, 101],
      [1, 101],
      [1, 102],
      [1, 102],
    ]);
    expect(Array.from(out.batch.promptOffsets)).toEqual([0, 3, 6, 8, 10, 12, 14]);
    expect(rows.map((r) => r.reward)).toEqual([0.25, 0.75, 1, 1, 1, 0]);
    expect(rows.map((r) => r.behaviorLogprobs)).toEqual(Array.from({ length: 6 }, () => [-0.5, -0.5, -0.5]));
    expect(out.texts).toEqual(['200:0', '200:1', '101:0', '101:1', '102:0', '102:1']);
    // a seed of its own: not the first sample's seed of any prompt
    expect(sampler.seeds.slice(0, 3)).not.toContain(sampler.seeds[3]);
    expect(out.metrics).toMatchObject({
      'routing/fraction': 1 / 3,
      'routing/reward_before': 0,
      'routing/reward_after': 0.5,
      'routing/reward_mean_before': 0.5,
    });
    expect(out.metrics['time/route_s']).toBeGreaterThanOrEqual(0);
  });

  it('is deterministic: the same step routes and samples the same', async () => {
    const a = await resampleGroups(stage(), await firstSample(recordingSampler()), problems, recordingSampler(), options, render);
    const b = await resampleGroups(stage(), await firstSample(recordingSampler()), problems, recordingSampler(), options, render);
    expect(batchToRows(a.batch)).toEqual(batchToRows(b.batch));
  });

  it('without a stage, or when nothing is routed, keeps the batch', async () => {
    const sampler = recordingSampler();
    const first = await firstSample(sampler);
    expect((await resampleGroups(undefined, first, problems, sampler, options, render)).batch).toBe(first.batch);
    const none = await resampleGroups({ ...stage(), route: () => [] }, first, problems, sampler, options, render);
    expect(none.batch).toBe(first.batch);
    expect(none.metrics['routing/fraction']).toBe(0);
    expect(Number.isNaN(none.metrics['routing/reward_before'])).toBe(true);
    expect(sampler.seen).toHaveLength(3);
  });

  it('refuses a group asked for twice in one step, and a grade that is not a finite number', async () => {
    const sampler = recordingSampler();
    const first = await firstSample(sampler);
    const twice: BoundRolloutStage = {
      ...stage(),
      route: () => [
        { group: 2, question: 'a' },
        { group: 2, question: 'b' },
      ],
    };
    await expect(resampleGroups(twice, first, problems, sampler, options, render)).rejects.toThrow(
      'method test-router asked to re-sample group 2 twice in one step',
    );
    expect(sampler.seen).toHaveLength(3); // refused before any sampling
    const nan: BoundRolloutStage = { ...stage(), grade: () => Number.NaN };
    await expect(resampleGroups(nan, first, problems, sampler, options, render)).rejects.toThrow(
      'method test-router graded completion 0 of re-sampled group 0 as NaN: a reward is a finite number',
    );
  });

  it('a stage with regrade re-grades every group of the routed batch, in a copy of the rewards', async () => {
    const sampler = recordingSampler();
    const first = await firstSample(sampler);
    const before = Array.from(first.batch.rewards);
    const seen: [number, number[], string[], number[]][] = [];
    const regrading: BoundRolloutStage = {
      ...stage(),
      regrade: (g) => {
        seen.push([g.group, Array.from(g.rewards), [...g.texts], Array.from(g.lengths)]);
        return g.group === 1 ? undefined : g.rewards.map((r) => r + 10);
      },
    };
    const out = await resampleGroups(regrading, first, problems, sampler, options, render);
    // it sees the groups after routing: group 0's new rollouts and grades
    expect(seen).toEqual([
      [0, [0.25, 0.75], ['200:0', '200:1'], [3, 3]],
      [1, [1, 1], ['101:0', '101:1'], [3, 3]],
      [2, [1, 0], ['102:0', '102:1'], [3, 3]],
    ]);
    expect(Array.from(out.batch.rewards)).toEqual([10.25, 10.75, 1, 1, 11, 10]);
    expect(out.metrics['routing/reward_mean_regraded']).toBeCloseTo(44 / 6, 6);
    expect(out.metrics['routing/reward_after']).toBe(0.5); // before the regrade
    expect(Array.from(first.batch.rewards)).toEqual(before);
    const bad: BoundRolloutStage = { ...stage(), route: () => [], regrade: () => Float32Array.of(1) };
    await expect(resampleGroups(bad, first, problems, sampler, options, render)).rejects.toThrow(
      'method test-router regraded group 0 with 1 rewards (1): one finite reward per rollout (2)',
    );
  });
});
