import { describe, expect, test } from 'vitest';
import { meanPassAtK, passAtK } from './pass-at-k.js';

/** The definition, by enumerating every k-subset of n samples of which the first c are correct. */
function bruteForce(n: number, c: number, k: number): number {
  let hit = 0;
  let all = 0;
  const walk = (start: number, left: number, anyCorrect: boolean): void => {
    if (left === 0) {
      all++;
      if (anyCorrect) hit++;
      return;
    }
    for (let i = start; i <= n - left; i++) walk(i + 1, left - 1, anyCorrect || i < c);
  };
  walk(0, k, false);
  return hit / all;
}

describe('passAtK', () => {
  test('equals the fraction of k-subsets holding a correct sample, for every n <= 9', () => {
    for (let n = 1; n <= 9; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++) expect(passAtK(n, c, k), `n=${n} c=${c} k=${k}`).toBeCloseTo(bruteForce(n, c, k), 12);
  });

  test('pass@1 is the fraction correct; pass@n is whether any is correct; large n stays finite', () => {
    expect(passAtK(16, 5, 1)).toBeCloseTo(5 / 16, 14);
    expect(passAtK(16, 1, 16)).toBe(1);
    expect(passAtK(16, 0, 16)).toBe(0);
    const big = passAtK(100_000, 3, 1000);
    expect(big).toBeGreaterThan(0.02);
    expect(big).toBeLessThan(0.03);
  });

  test('bad arguments are named', () => {
    expect(() => passAtK(4, 5, 1)).toThrow('need 1 <= k <= n and 0 <= c <= n, got n=4 c=5 k=1');
    expect(() => passAtK(4, 1, 5)).toThrow(RangeError);
    expect(() => passAtK(4, 1.5, 1)).toThrow('must be integers');
  });

  test('meanPassAtK averages over problems', () => {
    expect(meanPassAtK([0, 4, 2], 4, 1)).toBeCloseTo((0 + 1 + 0.5) / 3, 14);
    expect(meanPassAtK([], 4, 1)).toBeNaN();
  });
});
