import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { SampleRecord } from './run-dir.js';
import { positionProfile, weightHistogram } from './weight-stats.js';

const s = (correct: boolean, weights: number[]): SampleRecord => ({
  step: 0,
  group: 0,
  reward: correct ? 1 : 0,
  correct,
  advantage: 0,
  prompt: '',
  tokens: weights.map(() => 'x'),
  weights,
  spans: null,
});

describe('weightHistogram', () => {
  test('common bins over [min, max]; the maximum falls in the last bin', () => {
    const h = weightHistogram([s(true, [0, 1, 2, 4]), s(false, [4, 3])], 4)!;
    expect(h.edges).toEqual([0, 1, 2, 3, 4]);
    expect(h.counts).toEqual({ correct: [1, 1, 1, 1], wrong: [0, 0, 0, 2] });
    expect(h.totals).toEqual({ correct: 4, wrong: 2 });
  });

  test('all weights equal (uniform GRPO): one bin around the value holds every token', () => {
    const h = weightHistogram([s(true, [1, 1, 1]), s(false, [1])], 2)!;
    expect(h.edges).toEqual([0.5, 1, 1.5]);
    expect(h.counts).toEqual({ correct: [0, 3], wrong: [0, 1] });
  });

  test('no tokens: null', () => {
    expect(weightHistogram([], 10)).toBeNull();
    expect(weightHistogram([s(true, [])], 10)).toBeNull();
  });

  test('counts add up to the tokens of each outcome', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { maxLength: 20 })), { maxLength: 10 }),
        fc.integer({ min: 1, max: 50 }),
        (rows, bins) => {
          const samples = rows.map(([c, w]) => s(c, w));
          const h = weightHistogram(samples, bins);
          const n = (c: boolean): number => samples.filter((x) => x.correct === c).reduce((a, x) => a + x.weights.length, 0);
          if (h === null) {
            expect(n(true) + n(false)).toBe(0);
            return;
          }
          expect(h.counts.correct.reduce((a, b) => a + b, 0)).toBe(n(true));
          expect(h.counts.wrong.reduce((a, b) => a + b, 0)).toBe(n(false));
        },
      ),
    );
  });
});

describe('positionProfile', () => {
  test('hand-computed: per-rollout bin means, then mean and standard error over rollouts', () => {
    // len 4, 2 bins: t=0,1 -> bin 0; t=2,3 -> bin 1.  len 3: t=0,1 -> bin 0 (1*2/3 < 1); t=2 -> bin 1.
    const bins = positionProfile([s(true, [1, 2, 3, 4]), s(true, [3, 6, 9]), s(false, [5]), s(false, [])], 2);
    expect(bins.map((b) => [b.lo, b.hi])).toEqual([
      [0, 0.5],
      [0.5, 1],
    ]);
    // correct bin 0: rollout means 1.5 and 4.5 -> mean 3, sd sqrt(4.5), s.e. 1.5
    expect(bins[0]!.stats.correct.mean).toBeCloseTo(3, 12);
    expect(bins[0]!.stats.correct.sem).toBeCloseTo(1.5, 12);
    expect(bins[0]!.stats.correct.rollouts).toBe(2);
    expect(bins[0]!.stats.correct.tokens).toBe(4);
    // correct bin 1: 3.5 and 9 -> mean 6.25, s.e. 2.75
    expect(bins[1]!.stats.correct.mean).toBeCloseTo(6.25, 12);
    expect(bins[1]!.stats.correct.sem).toBeCloseTo(2.75, 12);
    expect(bins[1]!.stats.correct.tokens).toBe(3);
    // wrong: one rollout of one token, in bin 0; no s.e. from one rollout; empty completion ignored
    expect(bins[0]!.stats.wrong).toEqual({ mean: 5, sem: null, rollouts: 1, tokens: 1 });
    expect(bins[1]!.stats.wrong).toEqual({ mean: null, sem: null, rollouts: 0, tokens: 0 });
  });

  test('matches a brute-force reference that bins by exact rational t/len', () => {
    const sample = fc.tuple(fc.boolean(), fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 0, maxLength: 40 }));
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 8 }), fc.integer({ min: 2, max: 20 }), (rows, nb) => {
        const samples = rows.map(([c, w]) => s(c, w));
        const got = positionProfile(samples, nb);
        for (let b = 0; b < nb; b++) {
          for (const correct of [true, false]) {
            const means: number[] = [];
            for (const x of samples.filter((y) => y.correct === correct)) {
              const len = x.weights.length;
              // t/len in [b/nb, (b+1)/nb)  <=>  b*len <= t*nb < (b+1)*len
              const inBin = x.weights.filter((_, t) => b * len <= t * nb && t * nb < (b + 1) * len);
              if (inBin.length > 0) means.push(inBin.reduce((a, v) => a + v, 0) / inBin.length);
            }
            const stat = got[b]!.stats[correct ? 'correct' : 'wrong'];
            expect(stat.rollouts).toBe(means.length);
            if (means.length === 0) expect(stat.mean).toBeNull();
            else expect(stat.mean!).toBeCloseTo(means.reduce((a, v) => a + v, 0) / means.length, 9);
          }
        }
      }),
    );
  });
});
