import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sequentialDecision, sequentialLooks } from './sequential.js';

describe("sequential O'Brien-Fleming stopping", () => {
  it('spaces the looks and refuses looks with under 2 pairs', () => {
    expect(sequentialLooks(12, 3)).toEqual([4, 8, 12]);
    expect(sequentialLooks(10, 4)).toEqual([3, 5, 8, 10]);
    expect(() => sequentialLooks(3, 3)).toThrow(/under 2 pairs/);
  });
  it('stops early only on a small p, and always at the last look', () => {
    // look 1 of 3: bound 2.004 sqrt(3) = 3.471, nominal alpha 0.000518
    const first = sequentialDecision(1, 3, 0.001);
    expect(first.bound).toBeCloseTo(2.004 * Math.sqrt(3), 12);
    expect(first.nominalAlpha).toBeCloseTo(0.000518, 5);
    expect(first).toMatchObject({ crossed: false, stop: false });
    expect(sequentialDecision(1, 3, 0.0001)).toMatchObject({ crossed: true, stop: true });
    // the last look: bound 2.004, nominal alpha 0.0451
    expect(sequentialDecision(3, 3, 0.044)).toMatchObject({ crossed: true, stop: true });
    expect(sequentialDecision(3, 3, 0.047)).toMatchObject({ crossed: false, stop: true });
    expect(sequentialDecision(1, 1, 0.049).crossed).toBe(true);
  });
});

describe("the O'Brien-Fleming constants", () => {
  it("keep the overall two-sided alpha at 0.05 (SciPy's multivariate normal, tools/fixtures/report/scipy_tests.py)", () => {
    const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/scipy-tests.json', import.meta.url), 'utf8')) as {
      grid: { obf: { looks: number; c: number; alpha: number }[] };
    };
    expect(fixture.grid.obf.map((o) => o.looks)).toEqual([1, 2, 3, 4, 5]);
    for (const o of fixture.grid.obf) {
      expect(Math.abs(o.alpha - 0.05), `K = ${o.looks}`).toBeLessThan(6e-4);
      // the last look's bound is C(K): the decision at it uses the same constant
      expect(sequentialDecision(o.looks, o.looks, 0.5).bound).toBeCloseTo(o.c, 12);
    }
  });
});
