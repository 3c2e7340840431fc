import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { groupStats, segmentSum, segmentMean, segmentMeanStd, broadcastSegments } from './segments.js';

describe('groupStats', () => {
  it('matches hand-computed means and stds, biased and unbiased', () => {
    // group 0: [1, 2, 3, 6] mean 3, SS = 4+1+0+9 = 14; group 1: [5]; group 2: empty
    const v = new Float32Array([1, 5, 2, 3, 6]);
    const g = new Int32Array([0, 1, 0, 0, 0]);
    const pop = groupStats(v, g, 3);
    expect(Array.from(pop.count)).toEqual([4, 1, 0]);
    expect(Array.from(pop.mean)).toEqual([3, 5, 0]);
    expect(pop.std[0]).toBeCloseTo(Math.sqrt(14 / 4), 12);
    expect(pop.std[1]).toBe(0);
    const unb = groupStats(v, g, 3, true);
    expect(unb.std[0]).toBeCloseTo(Math.sqrt(14 / 3), 12);
    expect(unb.std[1]).toBe(0);
    expect(unb.std[2]).toBe(0);
  });

  it('keeps precision under a large offset (two-pass)', () => {
    const v = new Float64Array([1e9 + 1, 1e9 + 2, 1e9 + 3]);
    const s = groupStats(v, new Int32Array(3), 1, true);
    expect(s.std[0]).toBeCloseTo(1, 9);
  });
});

describe('segment reductions', () => {
  it('sum, mean and std over ragged segments, empty ones included', () => {
    const v = new Float32Array([1, 2, 3, 10, 4, 4]);
    const off = new Int32Array([0, 3, 3, 4, 6]);
    expect(Array.from(segmentSum(v, off))).toEqual([6, 0, 10, 8]);
    expect(Array.from(segmentMean(v, off))).toEqual([2, 0, 10, 4]);
    const { mean, std } = segmentMeanStd(v, off);
    expect(Array.from(mean)).toEqual([2, 0, 10, 4]);
    expect(std[0]).toBeCloseTo(Math.sqrt(2 / 3), 12);
    expect(Array.from(std.subarray(1))).toEqual([0, 0, 0]);
    const out = broadcastSegments([7, 8, 9, 1], off, new Float32Array(6));
    expect(Array.from(out)).toEqual([7, 7, 7, 9, 1, 1]);
  });

  it('segment sums add up to the total for any split', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 40 }), fc.array(fc.nat(40)), (xs, cuts) => {
        const points = [...new Set(cuts.map((c) => Math.min(c, xs.length)))].sort((a, b) => a - b);
        const off = new Int32Array([0, ...points.filter((p) => p > 0 && p < xs.length), xs.length]);
        const sums = segmentSum(xs, off);
        expect(sums.reduce((a, b) => a + b, 0)).toBe(xs.reduce((a, b) => a + b, 0));
      }),
    );
  });
});
