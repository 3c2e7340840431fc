import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { log1p } from './scores.js';

describe('log1p', () => {
  it('matches Math.log1p to a few ulps, tiny arguments included', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e30, noNaN: true }), fc.integer({ min: -40, max: 0 }), (x, e) => {
        const v = x * 10 ** e;
        const want = Math.log1p(v);
        expect(Math.abs(log1p(v) - want)).toBeLessThanOrEqual(4 * Number.EPSILON * Math.abs(want) + Number.MIN_VALUE);
      }),
      { numRuns: 2000 },
    );
    expect(log1p(0)).toBe(0);
    expect(log1p(1e-300)).toBe(1e-300);
  });
});
