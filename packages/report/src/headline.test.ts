import { describe, expect, test } from 'vitest';
import { headlineLines, headlineRows } from './headline.js';
import { pairedDifference } from './paired-difference.js';
import type { EvalRecord } from './run-dir.js';

describe('pairedDifference', () => {
  test('mean and standard error of per-problem differences, by hand', () => {
    // per-problem accuracies 0/4, 2/4, 4/4, 1/4 -> 2/4, 2/4, 4/4, 3/4: differences 0.5, 0, 0, 0.5
    const r = pairedDifference([0, 2, 4, 1], [2, 2, 4, 3], 4);
    expect(r.mean).toBeCloseTo(0.25, 14);
    // sample variance of [0.5, 0, 0, 0.5] = (4 * 0.0625) / 3; s.e. = sqrt(variance / 4)
    expect(r.standardError).toBeCloseTo(Math.sqrt(0.25 / 3) / 2, 14);
    expect(r.problems).toBe(4);
    expect(pairedDifference([1], [0], 1).standardError).toBeNaN();
    expect(() => pairedDifference([1, 2], [1], 4)).toThrow('the same problems');
  });
});

const ev = (step: number, correct: number[], greedyCorrect?: number[]): EvalRecord => ({
  step,
  accuracy: correct.reduce((a, c) => a + c / 4, 0) / correct.length,
  passAtN: correct.filter((c) => c > 0).length / correct.length,
  n: 4,
  problems: correct.length,
  correct,
  ...(greedyCorrect === undefined
    ? {}
    : { greedyCorrect, greedyAccuracy: greedyCorrect.reduce((a, c) => a + c, 0) / greedyCorrect.length }),
});

describe('headline', () => {
  test("rlvr train's lines: accuracy with the paired change, pass@n, greedy with its own paired change", () => {
    const lines = headlineLines([ev(0, [0, 2, 4, 1], [0, 1, 1, 0]), ev(5, [1, 1, 1, 1]), ev(10, [2, 2, 4, 3], [1, 1, 1, 0])]);
    expect(lines).toEqual([
      // 7/16 -> 11/16; differences 0.5, 0, 0, 0.5 (mean 0.25, s.e. sqrt(1/12)/2 = 0.144)
      'held-out accuracy (4 problems, mean of 4 samples): 43.8% at step 0 -> 68.8% at step 10 (+25.0 points, paired s.e. 14.4)',
      'pass@4: 75.0% -> 100.0%',
      // greedy 2/4 -> 3/4: differences 1, 0, 0, 0 (mean 0.25, s.e. 0.5/2 = 0.25)
      'greedy accuracy: 50.0% -> 75.0% (+25.0 points, paired s.e. 25.0)',
      // three evaluations: 0.25 / 0.144 = 1.7 s.e.; step 10 rose from step 5; gap 0.75 - 0.4375, closed 0.25 / 0.3125
      'learning: +25.0 points = 1.7 paired s.e.; no evaluation after step 5 fell below the one before it; 80% of the gap to pass@4 closed',
    ]);
  });

  test('one evaluation: its values; evaluations of different problems: no paired change; none: nothing', () => {
    expect(headlineRows([ev(0, [4, 0], [1, 0])])).toEqual([
      { label: 'held-out accuracy (2 problems, mean of 4 samples)', value: '50.0% at step 0' },
      { label: 'pass@4', value: '50.0%' },
      { label: 'greedy accuracy', value: '50.0%' },
    ]);
    expect(headlineLines([ev(0, [4, 0]), ev(3, [4, 4, 0])])[0]).toBe(
      'held-out accuracy (2 problems, mean of 4 samples): 50.0% at step 0 -> 66.7% at step 3',
    );
    expect(headlineRows([])).toEqual([]);
  });

  test('one problem: a singular noun and no standard error (no spread to estimate it from), not NaN', () => {
    expect(headlineLines([ev(0, [1], [0]), ev(2, [3], [1])])).toEqual([
      'held-out accuracy (1 problem, mean of 4 samples): 25.0% at step 0 -> 75.0% at step 2 (+50.0 points, no s.e. from 1 problem)',
      'pass@4: 100.0% -> 100.0%',
      'greedy accuracy: 0.0% -> 100.0% (+100.0 points, no s.e. from 1 problem)',
    ]);
  });
});
