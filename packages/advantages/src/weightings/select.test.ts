import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { selectKth } from './select.js';

describe('selectKth', () => {
  it('returns the k-th smallest (0-indexed) like a full sort, duplicates included', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.double({ min: -10, max: 10, noNaN: true }), fc.constantFrom(0, 1, 1, 2)), { minLength: 1, maxLength: 200 }),
        fc.nat(),
        (values, k0) => {
          const k = k0 % values.length;
          const sorted = [...values].sort((a, b) => a - b);
          // room past n: only the first n entries count
          const buf = new Float64Array(values.length + 3).fill(-99);
          buf.set(values);
          expect(selectKth(buf, values.length, k)).toBe(sorted[k]);
        },
      ),
    );
  });
  it('handles sorted, reversed and constant inputs', () => {
    const n = 1000;
    const up = Float64Array.from({ length: n }, (_, i) => i);
    expect(selectKth(up, n, 400)).toBe(400);
    const down = Float64Array.from({ length: n }, (_, i) => n - i);
    expect(selectKth(down, n, 0)).toBe(1);
    expect(selectKth(new Float64Array(n).fill(3), n, 999)).toBe(3);
  });
});
