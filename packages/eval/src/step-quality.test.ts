import { describe, expect, it } from 'vitest';
import type { Chain } from '@rlvr/tasks';
import { stepQuality } from './step-quality.js';

// three problems, their labels worked out by hand (see each comment)
const A: Chain = {
  start: 2,
  steps: [
    { op: 'add', operand: 3, result: 5 },
    { op: 'mul', operand: 4, result: 20 },
  ],
};
const B: Chain = { start: 10, steps: [{ op: 'sub', operand: 4, result: 6 }] };
const C: Chain = { start: 1, steps: [{ op: 'add', operand: 1, result: 2 }] };
const right = '2 + 3 = 5\n5 * 4 = 20\n\\boxed{20}';
const problems = [
  {
    chain: A,
    tokens: 40,
    samples: [
      { text: right, correct: true }, // useful, useful, answer: density 1
      { text: 'Let me think.\n2 + 3 = 5\n5 * 4 = 21\n\\boxed{21}', correct: false }, // filler, useful, wrong: 1/3; first error unlabelled (the filler line)
      { text: '2 + 3 = 5\n5 * 4 = 21\n\\boxed{21}', correct: false }, // useful, wrong: 1/2; arithmetic at step 1 of 2
      { text: right, correct: true }, // 1
    ],
  },
  {
    chain: B,
    tokens: 12,
    samples: [
      { text: '\\boxed{6}', correct: true }, // no step line
      { text: '10 - 4 = 6\n\\boxed{7}', correct: false }, // 6 never used: redundant, density 0; copy at the answer line (step 1 of 1)
    ],
  },
  {
    chain: C,
    tokens: 8,
    samples: [
      { text: '1 + 1 = 3', correct: false }, // wrong: 0; arithmetic at step 0 of 1
      { text: '1 + 1 = 2\n\\boxed{2}', correct: true }, // 1
    ],
  },
];

/** mean and SE (SD with k - 1, over sqrt k) written out */
const meanSe = (xs: number[]) => {
  const m = xs.reduce((a, x) => a + x, 0) / xs.length;
  return [m, Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length)];
};

describe('stepQuality', () => {
  it('matches the hand-worked numbers', () => {
    const q = stepQuality(problems);
    expect(q.problems).toBe(3);
    expect(q.samples).toBe(8);
    expect(q.noSteps).toBe(1);
    expect(q.wrong).toBe(4);
    // per-problem densities: A (1 + 1/3 + 1/2 + 1) / 4 = 17/24, B 0, C (0 + 1) / 2
    const [dm, dse] = meanSe([17 / 24, 0, 1 / 2]);
    expect(q.usefulDensity.mean).toBeCloseTo(29 / 72, 14);
    expect(q.usefulDensity.mean).toBeCloseTo(dm!, 14);
    expect(q.usefulDensity.se).toBeCloseTo(dse!, 14);
    expect(q.usefulDensity.problems).toBe(3);
    // localised: A 1 of 2, B 1 of 1, C 1 of 1 -> mean 5/6, SE 1/6
    expect(q.localised.mean).toBeCloseTo(5 / 6, 14);
    expect(q.localised.se).toBeCloseTo(1 / 6, 14);
    // error at: A 1/2, B 1, C 0 -> mean 1/2, SE 0.5 / sqrt 3
    expect(q.errorAt.mean).toBeCloseTo(0.5, 14);
    expect(q.errorAt.se).toBeCloseTo(0.5 / Math.sqrt(3), 14);
    expect(q.firstErrors).toMatchObject({ unlabelled: 1, arithmetic: 2, copy: 1, operation: 0, missing_step: 0, correct: 0 });
    // tokens 40 + 12 + 8 over 2 + 1 + 1 solved = 15; residuals 40 - 30, 12 - 15, 8 - 15: sqrt(158 / (3 * 2)) / (4 / 3)
    expect(q.tokensPerSolved.value).toBe(15);
    expect(q.tokensPerSolved.se).toBeCloseTo(Math.sqrt(158 / 6) / (4 / 3), 12);
    expect(q.tokensPerSolved).toMatchObject({ tokens: 60, solved: 4 });
  });

  it('leaves what is undefined null: nothing solved, no wrong completion, one problem', () => {
    const none = stepQuality([{ chain: C, tokens: 9, samples: [{ text: 'no idea', correct: false }] }]);
    expect(none.tokensPerSolved).toEqual({ value: null, se: null, tokens: 9, solved: 0 });
    expect(none.usefulDensity).toEqual({ mean: 0, se: null, problems: 1 }); // 'no idea' is one filler step line
    expect(none.localised).toEqual({ mean: 0, se: null, problems: 1 });
    expect(none.errorAt).toEqual({ mean: null, se: null, problems: 0 });
    const solved = stepQuality([{ chain: C, tokens: 5, samples: [{ text: '1 + 1 = 2\n\\boxed{2}', correct: true }] }]);
    expect(solved.localised.problems).toBe(0);
    expect(solved.tokensPerSolved).toEqual({ value: 5, se: null, tokens: 5, solved: 1 });
    expect(() => stepQuality([])).toThrow(/no problems/);
  });
});
