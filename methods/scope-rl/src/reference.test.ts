import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prepareEstimator } from '@rlvr/advantages';
import { Signals, batchFromRows, type ScoredGroup } from '@rlvr/core';
import { labelSteps, type StepLabel } from '@rlvr/tasks';
import { processShape, routeGroups, scaffoldReward, scopeRlEstimator } from './index.js';

interface Problem {
  subAnswers: string[] | null;
  answer: string;
  first: number[];
  routed: boolean;
  texts: string[];
  rewards: number[];
  prefix: number[];
  mainCorrect: boolean[];
}
interface Case {
  name: string;
  tau: number;
  beta: number;
  groupSize: number;
  problems: Problem[];
  advantages: number[];
}
interface Stage2 {
  text: string;
  tokens: number;
  usefulWeight: number;
  lowValuePenalty: number;
  lengthPenalty: number;
  labels: StepLabel[];
  shape: number;
}
/** Written by tools/fixtures/scope-rl/numpy_reference.py (float64 NumPy, from the method's definition). */
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/numpy-reference.json', import.meta.url), 'utf8')) as {
  cases: Case[];
  stage2: Stage2[];
};

// the scaffold's sub-questions do not matter to routing or grading: one placeholder each, without digits (which the leak check would read)
const scaffoldOfProblem = (p: Problem) =>
  p.subAnswers === null
    ? undefined
    : { scaffold: { subQuestions: p.subAnswers.map((_, k) => `sub-question ${'abcd'[k]}?`), subAnswers: p.subAnswers } };

describe.each(fixture.cases.map((c) => [c.name, c] as const))('NumPy reference: %s', (_name, c) => {
  const options = { tau: c.tau, beta: c.beta, scaffoldField: 'scaffold' };
  const groups: ScoredGroup[] = c.problems.map((p, g) => ({
    group: g,
    question: `question ${g}`,
    answer: p.answer,
    aux: scaffoldOfProblem(p),
    source: undefined,
    rewards: Float32Array.from(p.first),
    texts: p.first.map(() => ''),
    lengths: new Int32Array(p.first.length),
  }));

  it('routes the same groups', () => {
    const routed = routeGroups(groups, options).map((r) => r.group);
    expect(routed).toEqual(c.problems.flatMap((p, g) => (p.routed ? [g] : [])));
  });

  it('grades every scaffolded completion alike (reward within 1e-12, prefix, main answer)', () => {
    c.problems.forEach((p) => {
      p.texts.forEach((text, j) => {
        const scaffold = scaffoldOfProblem(p)!.scaffold;
        const got = scaffoldReward(text, scaffold, p.answer, c.beta);
        expect(Math.abs(got.reward - p.rewards[j]!), text).toBeLessThan(1e-12);
        expect(got.prefix, text).toBe(p.prefix[j]);
        expect(got.mainCorrect, text).toBe(p.mainCorrect[j]);
      });
    });
  });

  it("gives GRPO's advantages on the routed batch within 1e-6", () => {
    const rows = c.problems.flatMap((p, g) =>
      (p.routed ? p.rewards : p.first).map((reward) => ({ group: g, reward, prompt: [1], completion: [2, 3] })),
    );
    const batch = batchFromRows(rows);
    const r = prepareEstimator(scopeRlEstimator, { tau: c.tau, beta: c.beta }).estimate(batch, Signals.forBatch(batch));
    c.advantages.forEach((want, i) => {
      expect(Math.abs(r.sequenceAdvantages[i]! - want)).toBeLessThan(1e-6);
      expect(Math.abs(r.advantages[2 * i]! - want)).toBeLessThan(1e-6);
    });
  });
});

describe('NumPy reference: stage 2', () => {
  it('labels every step of 50 worked solutions alike (10 written one digit at a time), and gives the same process-shape term (1e-12)', () => {
    expect(fixture.stage2).toHaveLength(50);
    for (const c of fixture.stage2) {
      const labels = labelSteps(c.text);
      expect(labels, c.text).toEqual(c.labels);
      expect(Math.abs(processShape(labels, c.tokens, c) - c.shape), c.text).toBeLessThan(1e-12);
    }
  });
});
