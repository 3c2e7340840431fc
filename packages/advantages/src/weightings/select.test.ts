import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { selectKthBits } from './select.js';

/** The slow, obviously-correct twin: sort and index. */
const bySort = (values: number[], k: number) => [...values].sort((a, b) => a - b)[k]!;

describe('selectKthBits', () => {
  const counts = new Int32Array(2048);
  it('returns the k-th smallest non-negative float32 (0-indexed) like a full sort, duplicates included', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.float({ min: 0, max: Math.fround(1e30), noNaN: true, noDefaultInfinity: true }),
            fc.constantFrom(0, Math.fround(1e-40), 1, 1, 2.5),
          ),
          { minLength: 1, maxLength: 300 },
        ),
        fc.nat(),
        fc.nat(5),
        (raw, k0, pad) => {
          const values = raw.map((v) => (Object.is(v, -0) ? 0 : v));
          const k = k0 % values.length;
          // the rollout sits inside a longer array: only [pad, pad + n) counts
          const f32 = new Float32Array(values.length + 2 * pad).fill(7e30);
          f32.set(values, pad);
          const got = selectKthBits(new Uint32Array(f32.buffer), pad, values.length, k, counts, new Uint32Array(values.length));
          expect(new Float32Array(new Uint32Array([got]).buffer)[0]).toBe(bySort(values, k));
        },
      ),
      { numRuns: 300 },
    );
  });
  it('handles sorted, reversed and constant inputs', () => {
    const n = 5000;
    const cand = new Uint32Array(n);
    const up = new Uint32Array(Float32Array.from({ length: n }, (_, i) => i).buffer);
    expect(new Float32Array(new Uint32Array([selectKthBits(up, 0, n, 400, counts, cand)]).buffer)[0]).toBe(400);
    const down = new Uint32Array(Float32Array.from({ length: n }, (_, i) => n - i).buffer);
    expect(new Float32Array(new Uint32Array([selectKthBits(down, 0, n, 0, counts, cand)]).buffer)[0]).toBe(1);
    const same = new Uint32Array(new Float32Array(n).fill(3).buffer);
    expect(new Float32Array(new Uint32Array([selectKthBits(same, 0, n, n - 1, counts, cand)]).buffer)[0]).toBe(3);
  });
});
