import { describe, expect, test } from 'vitest';
import { averageScores, scoreDataset } from './score.js';
import type { SampleOutcome } from './score.js';
import { formatEvalJson, formatEvalTable } from './table.js';

/** A problem's samples from a compact spec: 'c' correct, 'w' wrong, 'x' no answer; tokens and truncation per sample. */
const problem = (spec: string, tokens: number[], truncated: boolean[] = []): { samples: SampleOutcome[]; tokens: number } => ({
  samples: [...spec].map((ch, j) => ({ correct: ch === 'c', answered: ch !== 'x', truncated: truncated[j] ?? false })),
  tokens: tokens.reduce((a, t) => a + t, 0),
});
/** `scoreDataset` of problems built by `problem`. */
const scoreOf = (problems: ReturnType<typeof problem>[], n: number) =>
  scoreDataset(
    problems.map((p) => p.samples),
    n,
    problems.map((p) => p.tokens),
  );

describe('scoreDataset', () => {
  test('mean accuracy, pass@1, pass@n, tokens, truncation and missing answers against hand-computed numbers', () => {
    // correct counts 3, 1, 0, 2 of n = 3
    const s = scoreOf(
      [
        problem('ccc', [10, 20, 30]),
        problem('wcw', [5, 5, 5], [false, false, true]),
        problem('wxx', [100, 100, 100], [true, true, false]),
        problem('cwc', [1, 2, 3]),
      ],
      3,
    );
    expect(s.correct).toEqual([3, 1, 0, 2]);
    expect(s.problems).toBe(4);
    expect(s.n).toBe(3);
    // (3/3 + 1/3 + 0/3 + 2/3) / 4 = 2/4
    expect(s.accuracy).toBeCloseTo(0.5, 12);
    // unbiased pass@1 is c/n per problem: the mean accuracy again
    expect(s.passAt1).toBeCloseTo(0.5, 12);
    // pass@3 of 3 samples: problems with any correct sample, 3 of 4
    expect(s.passAtN).toBeCloseTo(0.75, 12);
    // (60 + 15 + 300 + 6) / 12 samples
    expect(s.meanTokens).toBeCloseTo(381 / 12, 12);
    expect(s.truncated).toBeCloseTo(3 / 12, 12);
    expect(s.noAnswer).toBeCloseTo(2 / 12, 12);
  });

  test('pass@n with n = 4: 1 - C(n-c, n)/C(n, n) is 1 as soon as one sample is correct', () => {
    const s = scoreOf([problem('cwww', [1, 1, 1, 1]), problem('wwww', [1, 1, 1, 1])], 4);
    expect(s.accuracy).toBeCloseTo(0.125, 12);
    expect(s.passAtN).toBeCloseTo(0.5, 12);
  });

  test('refuses a problem with the wrong number of samples and an empty dataset', () => {
    expect(() => scoreOf([problem('cc', [1, 1])], 3)).toThrow(/problem 0 has 2 samples, expected n=3/);
    expect(() => scoreOf([], 3)).toThrow(/no problems/);
    expect(() => scoreDataset([problem('cc', [1, 1]).samples], 2, [])).toThrow(/0 token counts for 1 problems/);
  });
});

describe('averageScores', () => {
  const a = scoreOf([problem('cc', [10, 10]), problem('cw', [20, 20]), problem('ww', [30, 30], [true, true]), problem('ww', [40, 40])], 2);
  const b = scoreOf([problem('cc', [100, 100])], 2);

  test('plain mean over datasets and the problem-weighted mean, by hand', () => {
    // a: acc (1 + 0.5 + 0 + 0) / 4 = 0.375, pass@2 0.5, tokens 25, truncated 0.25; b: 1, 1, 100, 0
    const mean = averageScores([a, b], 'mean');
    expect(mean.problems).toBe(5);
    expect(mean.accuracy).toBeCloseTo((0.375 + 1) / 2, 12);
    expect(mean.passAtN).toBeCloseTo((0.5 + 1) / 2, 12);
    expect(mean.meanTokens).toBeCloseTo((25 + 100) / 2, 12);
    expect(mean.truncated).toBeCloseTo(0.125, 12);
    const weighted = averageScores([a, b], 'weighted');
    // pooled: correct 2+1+0+0+2 = 5 of 10 samples; 3 of 5 problems solved; 200 + 200 tokens / 10 samples; 2 of 10 truncated
    expect(weighted.accuracy).toBeCloseTo(0.5, 12);
    expect(weighted.passAt1).toBeCloseTo(0.5, 12);
    expect(weighted.passAtN).toBeCloseTo(0.6, 12);
    expect(weighted.meanTokens).toBeCloseTo(40, 12);
    expect(weighted.truncated).toBeCloseTo(0.2, 12);
  });

  test('refuses datasets sampled with different n', () => {
    expect(() => averageScores([a, scoreOf([problem('c', [1])], 1)], 'mean')).toThrow(/different n/);
  });
});

describe('formatEvalTable', () => {
  const math = { name: 'math500', ...scoreOf([problem('ccc', [10, 20, 30]), problem('wcw', [5, 5, 5], [false, false, true])], 3) };
  const aime = { name: 'aime24', ...scoreOf([problem('www', [100, 100, 100], [true, true, true])], 3) };

  test('one row per dataset, then average and weighted, right-aligned', () => {
    const table = formatEvalTable({
      datasets: [math, aime],
      average: averageScores([math, aime], 'mean'),
      weighted: averageScores([math, aime], 'weighted'),
    });
    expect(table).toBe(
      [
        'dataset   problems  n  mean acc  pass@1  pass@3  mean tokens  truncated',
        'math500          2  3     66.7%   66.7%  100.0%         12.5      16.7%',
        'aime24           1  3      0.0%    0.0%    0.0%        100.0     100.0%',
        'average          3  3     33.3%   33.3%   50.0%         56.3      58.3%',
        'weighted         3  3     44.4%   44.4%   66.7%         41.7      44.4%',
      ].join('\n'),
    );
  });

  test('a single dataset gets the average row only; with n = 1 there is one pass@1 column', () => {
    const one = { name: 'synthetic', ...scoreOf([problem('c', [4]), problem('w', [6])], 1) };
    const avg = averageScores([one], 'mean');
    expect(formatEvalTable({ datasets: [one], average: avg, weighted: avg }).split('\n')).toEqual([
      'dataset    problems  n  mean acc  pass@1  mean tokens  truncated',
      'synthetic         2  1     50.0%   50.0%          5.0       0.0%',
      'average           2  1     50.0%   50.0%          5.0       0.0%',
    ]);
  });
});

describe('formatEvalJson', () => {
  test('number arrays on one line, everything else indented; parses back to the same value', () => {
    const value = { correct: [3, 1, 0], lines: [1, 2, 3], ids: ['a', 'b'], nested: { x: 0.25, e: [1e-7, -2] }, empty: [] };
    const text = formatEvalJson(value);
    expect(text).toContain('"correct": [3, 1, 0],');
    expect(text).toContain('"e": [1e-7, -2]');
    expect(text).toContain('"ids": [\n    "a",');
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toEqual(value);
  });
});
