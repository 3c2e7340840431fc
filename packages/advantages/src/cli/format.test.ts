import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatFloat32, formatFloat32Array } from './format.js';

describe('formatFloat32', () => {
  it('reads back as the same float32, never longer than the float64 form', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = formatFloat32(x);
        expect(Math.fround(Number(text))).toBe(x === 0 ? 0 : x);
        expect(text.length).toBeLessThanOrEqual(String(x).length);
      }),
      { numRuns: 2000 },
    );
  });
  it('writes JSON: 0 for -0, null for NaN and infinities', () => {
    expect([formatFloat32(-0), formatFloat32(NaN), formatFloat32(Infinity), formatFloat32(Math.fround(0.3))]).toEqual([
      '0',
      'null',
      'null',
      '0.3',
    ]);
  });
});

describe('formatFloat32Array', () => {
  it('equals formatting each value, repeated values and NaN included', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(0, -0, NaN, Math.fround(0.8660254)), fc.float()), { maxLength: 40 }),
        fc.nat(5),
        (xs, cut) => {
          const values = Float32Array.from(xs);
          const start = Math.min(cut, values.length);
          const want = '[' + Array.from(values.subarray(start), formatFloat32).join(',') + ']';
          expect(formatFloat32Array(values, start, values.length)).toBe(want);
        },
      ),
      { numRuns: 500 },
    );
  });
});
