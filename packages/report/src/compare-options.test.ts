import { describe, expect, test } from 'vitest';
import { CompareOptionsSchema, compareOptionsProblem } from './compare-options.js';
import type { CompareOptionsInput } from './compare-options.js';

const problem = (o: Partial<CompareOptionsInput>) =>
  compareOptionsProblem(CompareOptionsSchema.parse({ estimators: ['grpo', 'grail'], seeds: [0, 1], out: 'o', ...o }), (e) => `o/${e}`);

describe('compareOptionsProblem', () => {
  test('consistent options: none', () => {
    expect(problem({})).toBeUndefined();
    expect(problem({ tune: { grid: [1e-5, 1e-4], seeds: [1000, 1001] } })).toBeUndefined();
  });

  test.each<[Partial<CompareOptionsInput>, string]>([
    [{ estimators: ['grpo', 'grpo'] }, 'estimator "grpo" is listed twice'],
    [{ seeds: [1, 1] }, 'seed 1 is listed twice'],
    [{ primary: ['grail', 'rloo'] }, 'primary contrast grail:rloo: "rloo" is not among the estimators (grpo, grail)'],
    [{ baseline: 'rloo' }, 'baseline "rloo" is not among the estimators (grpo, grail)'],
    [{ tune: { grid: [1e-5, 1e-4], seeds: [1, 7] } }, 'tuning seed(s) 1 also comparison seed(s): tuning and comparison seeds must differ'],
    [{ tune: { grid: [1e-5, 1e-4], seeds: [7, 7] } }, 'tuning seed 7 is listed twice'],
    [{ tune: { grid: [1e-5, 1e-5], seeds: [7] } }, 'the tuning grid lists the rate 0.00001 twice'],
  ])('%j: %s', (o, message) => {
    expect(problem(o)).toBe(message);
  });

  test('the schema: a grid of one rate, or a rate that is not positive, fails', () => {
    const base = { estimators: ['grpo'], seeds: [0], out: 'o' };
    expect(CompareOptionsSchema.safeParse({ ...base, tune: { grid: [1e-5], seeds: [7] } }).success).toBe(false);
    expect(CompareOptionsSchema.safeParse({ ...base, tune: { grid: [0, 1e-5], seeds: [7] } }).success).toBe(false);
    expect(CompareOptionsSchema.parse({ ...base, tune: { grid: [1e-5, 1e-4], seeds: [7] } }).tune!.maxWiden).toBe(3);
  });
});
