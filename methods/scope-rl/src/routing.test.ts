import { describe, expect, it } from 'vitest';
import { prepareEstimator } from '@rlvr/advantages';
import { Signals, batchToRows, type ScoredGroup } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import { resampleGroups, sampleGroups, type Sampler } from '@rlvr/rollout';
import { MAIN_LABEL, routeGroups, scaffoldOf, scaffoldedQuestion, scopeRlEstimator, subLabel } from './index.js';

// a character tokenizer: token = UTF-16 code unit, so a prompt decodes back to its text
const render = (q: string) => Array.from(q, (c) => c.charCodeAt(0));
const decode = (tokens: readonly number[]) => String.fromCharCode(...tokens);

const problems = [
  {
    question: 'Ann has 8 apples. She buys 5 more, then gives away 6. How many apples does Ann have?',
    answer: '7',
    aux: { scaffold: { subQuestions: ['How many apples does Ann have after buying more?'], subAnswers: ['13'] } },
  },
  { question: 'Tom has 3 pens. He buys 4 more. How many pens does Tom have?', answer: '7' },
].map((p) => ({ ...p, prompt: render(p.question) }));

/**
 * A scripted policy. On an original prompt it answers correctly in `solved[problem]` of its G
 * completions; on a scaffolded prompt it answers the sub-question right in every completion and the
 * main question right in the first two (so the scaffolded rewards are 1, 1, 0.5, 0.5 with beta 0.5).
 */
function scriptedPolicy(solved: number[]): Sampler & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    name: 'scripted',
    prompts,
    sample: async (requests) =>
      requests.map((r) => {
        const text = decode(r.prompt.tokens!);
        prompts.push(text);
        const p = problems.findIndex((q) => text.startsWith(q.question));
        const scaffolded = text.includes(MAIN_LABEL);
        const completions = Array.from({ length: r.n }, (_, j) => {
          const answer = scaffolded
            ? `${subLabel(1)} \\boxed{13}\n${MAIN_LABEL} \\boxed{${j < 2 ? 7 : 1}}`
            : `\\boxed{${j < solved[p]! ? problems[p]!.answer : 0}}`;
          return { tokens: render(answer), logprobs: render(answer).map(() => -1), finish: 'stop' as const, text: answer };
        });
        return { promptTokens: [...r.prompt.tokens!], completions };
      }),
  };
}

/** One step as `rlvr train` runs it: sample, grade with the verifier, route, then the advantages. */
async function step(sampler: Sampler, seed: number) {
  const estimator = prepareEstimator(scopeRlEstimator, {});
  const options = { groupSize: 4, maxNewTokens: 64, seed };
  const first = await sampleGroups(
    problems.map((p) => ({ tokens: p.prompt })),
    sampler,
    options,
  );
  first.texts.forEach((t, i) => (first.batch.rewards[i] = mathReward(t, problems[Math.floor(i / 4)]!.answer).reward));
  const routed = await resampleGroups(estimator.rolloutStage, first, problems, sampler, options, render);
  const adv = estimator.estimate(routed.batch, Signals.forBatch(routed.batch));
  return { first, routed, adv };
}

describe('scope-rl routing over steps', () => {
  it('routes a failing group to its scaffold, trains on the scaffolded rollouts, and withdraws the scaffold once the group solves it', async () => {
    // step 1: problem 0 is failed by every rollout (mean 0 < tau): routed; problem 1 has no scaffold, never routed
    const policy1 = scriptedPolicy([0, 0]);
    const s1 = await step(policy1, 1);
    expect(s1.routed.routed).toEqual([0]);
    expect(policy1.prompts).toHaveLength(3);
    expect(policy1.prompts[2]).toBe(scaffoldedQuestion(problems[0]!.question, problems[0]!.aux!.scaffold));
    const rows = batchToRows(s1.routed.batch);
    expect(rows.map((r) => decode(r.prompt) === policy1.prompts[2])).toEqual([true, true, true, true, false, false, false, false]);
    expect(rows.map((r) => r.reward)).toEqual([1, 1, 0.5, 0.5, 0, 0, 0, 0]);
    expect(s1.routed.metrics).toMatchObject({ 'routing/fraction': 0.5, 'routing/reward_before': 0, 'routing/reward_after': 0.75 });
    // GRPO on the scaffolded rewards: a learning signal where the original group had none
    expect(s1.adv.sequenceAdvantages[0]).toBeGreaterThan(0);
    expect(s1.adv.sequenceAdvantages[2]).toBeLessThan(0);
    expect(Array.from(s1.adv.sequenceAdvantages.subarray(4))).toEqual([0, 0, 0, 0]);

    // step 2: still below tau (1 of 4): routed again
    expect((await step(scriptedPolicy([1, 0]), 2)).routed.routed).toEqual([0]);

    // step 3: the policy now solves problem 0 in 2 of 4 (mean 0.5 = tau): the scaffold is withdrawn
    const policy3 = scriptedPolicy([2, 0]);
    const s3 = await step(policy3, 3);
    expect(s3.routed.routed).toEqual([]);
    expect(policy3.prompts).toHaveLength(2); // no re-sampling
    expect(s3.routed.batch).toBe(s3.first.batch);
    expect(s3.routed.metrics['routing/fraction']).toBe(0);
  });

  it('a group at tau is not routed; just below it is', () => {
    const group = (rewards: number[]): ScoredGroup => ({
      group: 0,
      question: problems[0]!.question,
      answer: '7',
      aux: problems[0]!.aux,
      source: undefined,
      rewards: Float32Array.from(rewards),
      texts: rewards.map(() => ''),
      lengths: new Int32Array(rewards.length),
    });
    const c = { tau: 0.5, beta: 0.5, scaffoldField: 'scaffold' };
    expect(routeGroups([group([1, 1, 0, 0])], c)).toEqual([]);
    expect(routeGroups([group([1, 0, 0, 0])], c)).toHaveLength(1);
    expect(routeGroups([group([1, 0, 0, 0])], { ...c, scaffoldField: 'other' })).toEqual([]);
    expect(scaffoldOf(group([0]), 'scaffold')?.subAnswers).toEqual(['13']);
  });
});
