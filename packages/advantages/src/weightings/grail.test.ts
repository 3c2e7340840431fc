import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Signals } from '@rlvr/core';
import { AdvantagesError } from '../errors.js';
import { grail, GrailConfigSchema } from './grail.js';
import { batchArb, makeBatch, slices, type TestRollout } from '../test-utils/batches.js';
import { prepareEstimator } from '../prepare.js';

function weigh(rollouts: TestRollout[], seq: number[], config: Record<string, unknown> = {}) {
  const { batch, signals } = makeBatch(rollouts);
  const out = new Float32Array(signals.totalTokens);
  const metrics = grail.compute(batch, signals, Float64Array.from(seq), GrailConfigSchema.parse(config), out);
  return { w: slices(batch, out), metrics };
}

const E = Math.E;
// ln s = 0, 1, 2, 3 (up to float32 rounding of s): mean 1.5, population var 1.25
const ramp = [1, E, E ** 2, E ** 3].map(Math.fround);
const z = [-1.5, -0.5, 0.5, 1.5].map((d) => d / Math.sqrt(1.25));

describe('grail weights, by hand', () => {
  it('z-scores ln(s + eps) per rollout, maps to wMean + sigmaW z and clips', () => {
    const { w, metrics } = weigh(
      [{ group: 0, reward: 0, length: 4, scores: ramp, spans: { open: [4, 4], content: [4, 4], close: [4, 4] } }],
      [-1],
    );
    // 1 + 0.5 z = 0.3292 (clipped to 0.5), 0.7764, 1.2236, 1.6708
    expect(w[0]![0]).toBe(0.5);
    expect(w[0]![1]).toBeCloseTo(1 + 0.5 * z[1]!, 6);
    expect(w[0]![2]).toBeCloseTo(1 + 0.5 * z[2]!, 6);
    expect(w[0]![3]).toBeCloseTo(1.67082, 5);
    expect(metrics.clip_frac_min).toBe(0.25);
    expect(metrics.clip_frac_max).toBe(0);
  });
  it('counts clipped tokens as the reference does, a weight exactly at a bound included (<=, >=)', () => {
    // equal scores: z = 0 exactly, so every raw weight is exactly wMean; with wMin = wMean it sits on the bound
    const rollouts: TestRollout[] = [
      { group: 0, reward: 0, length: 2, scores: [0.3, 0.3], spans: { open: [2, 2], content: [2, 2], close: [2, 2] } },
    ];
    expect(weigh(rollouts, [0], { wMin: 1 }).metrics.clip_frac_min).toBe(1);
    expect(weigh(rollouts, [0], { wMax: 1 }).metrics.clip_frac_max).toBe(1);
    expect(weigh(rollouts, [0], { wMin: 1 }).w).toEqual([[1, 1]]);
    expect(weigh(rollouts, [0]).metrics.clip_frac_min).toBe(0);
  });
  it('uses sigma = sqrt(var + eps), so a rollout with equal scores gets wMean', () => {
    const { w } = weigh(
      [{ group: 0, reward: 0, length: 3, scores: [2, 2, 2], spans: { open: [3, 3], content: [3, 3], close: [3, 3] } }],
      [-1],
    );
    expect(w[0]).toEqual([1, 1, 1]);
  });
  it('applies sigmaW, wMean and the clip bounds from the config', () => {
    const { w, metrics } = weigh(
      [{ group: 0, reward: 0, length: 4, scores: ramp, spans: { open: [4, 4], content: [4, 4], close: [4, 4] } }],
      [0],
      {
        sigmaW: 2,
        wMean: 1.5,
        wMin: 0.2,
        wMax: 3,
      },
    );
    // 1.5 + 2 z = -1.18 -> 0.2, 0.606, 2.394, 4.18 -> 3
    expect(w[0]![0]).toBeCloseTo(0.2, 6);
    expect(w[0]![1]).toBeCloseTo(1.5 + 2 * z[1]!, 5);
    expect(w[0]![2]).toBeCloseTo(1.5 + 2 * z[2]!, 5);
    expect(w[0]![3]).toBe(3);
    expect(metrics.clip_frac_max).toBe(0.25);
  });
  it('overrides: content -> wMax, delimiters -> wMean, post-answer incl. EOS -> wMean; statistics still use every token', () => {
    // 8 tokens: reasoning 0-1, open 2, content 3-4, close 5, post 6-7 (EOS last)
    const scores = [1, E ** 3, 1, 1, 1, 1, E ** 3, E ** 3].map(Math.fround);
    const { w } = weigh([{ group: 0, reward: 0, length: 8, scores, spans: { open: [2, 3], content: [3, 5], close: [5, 6] } }], [-0.5], {
      wMean: 1.25,
    });
    const ls = scores.map((s) => Math.log(s + 1e-8));
    const mu = ls.reduce((a, b) => a + b) / 8;
    const sd = Math.sqrt(ls.reduce((a, l) => a + (l - mu) ** 2, 0) / 8 + 1e-8);
    const at = (t: number) => Math.min(5, Math.max(0.5, 1.25 + (0.5 * (ls[t]! - mu)) / sd));
    expect(w[0]![0]).toBeCloseTo(at(0), 5);
    expect(w[0]![1]).toBeCloseTo(at(1), 5);
    expect(w[0]!.slice(2)).toEqual([1.25, 5, 5, 1.25, 1.25, 1.25]);
  });
  it('gives weight 1 everywhere to a rollout without an answer', () => {
    const { w, metrics } = weigh([{ group: 0, reward: 0, length: 4, scores: ramp, spans: null }], [-1]);
    expect(w[0]).toEqual([1, 1, 1, 1]);
    expect(metrics.fallback_rate).toBe(1);
  });
});

describe('grail symmetry', () => {
  const spans = { open: [1, 2], content: [2, 3], close: [3, 4] } as const;
  const two: TestRollout[] = [
    {
      group: 0,
      reward: 1,
      length: 6,
      scores: [Math.fround(1e-4), ...ramp.slice(1), 1, 1],
      spans: { open: [...spans.open], content: [...spans.content], close: [...spans.close] },
    },
    {
      group: 0,
      reward: 0,
      length: 6,
      scores: [Math.fround(1e-4), ...ramp.slice(1), 1, 1],
      spans: { open: [...spans.open], content: [...spans.content], close: [...spans.close] },
    },
  ];
  const seq = [0.5, -0.5];
  it('wrong (default, reference code): A > 0 rollouts keep 1 except the content override, A <= 0 rollouts are weighted', () => {
    const { w, metrics } = weigh(two, seq, { wMean: 1.1 });
    expect(w[0]).toEqual([1, 1.1, 5, 1.1, 1.1, 1.1].map(Math.fround));
    expect(w[1]![0]).toBe(0.5);
    expect(w[1]!.slice(1)).toEqual([1.1, 5, 1.1, 1.1, 1.1].map(Math.fround));
    expect(metrics.excluded_rate).toBe(0.5);
  });
  it('wrong with overrideExcluded false (the paper’s reading): A > 0 rollouts are 1 everywhere', () => {
    const { w } = weigh(two, seq, { overrideExcluded: false });
    expect(w[0]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(w[1]![2]).toBe(5);
  });
  it('correct weights A > 0 rollouts only; both weights all; A = 0 counts as wrong', () => {
    const c = weigh(two, seq, { symmetry: 'correct', overrideExcluded: false });
    expect(c.w[0]![0]).toBe(0.5);
    expect(c.w[1]).toEqual([1, 1, 1, 1, 1, 1]);
    const b = weigh(two, seq, { symmetry: 'both' });
    expect(b.w[0]![0]).toBe(0.5);
    expect(b.w[1]![0]).toBe(0.5);
    const zero = weigh(two, [0, 0], { symmetry: 'wrong' });
    expect(zero.w[0]![0]).toBe(0.5);
    const zeroCorrect = weigh(two, [0, 0], { symmetry: 'correct', overrideExcluded: false });
    expect(zeroCorrect.w[0]).toEqual([1, 1, 1, 1, 1, 1]);
  });
});

describe('grail properties', () => {
  const configs = fc.record({
    sigmaW: fc.double({ min: 0.05, max: 3, noNaN: true }),
    wMin: fc.double({ min: 0, max: 1, noNaN: true }),
    wMax: fc.double({ min: 1, max: 6, noNaN: true }),
    symmetry: fc.constantFrom('wrong', 'correct', 'both'),
    overrideExcluded: fc.boolean(),
  });
  it('weighted rollouts lie in [wMin, wMax]; every override holds; others are 1', () => {
    fc.assert(
      fc.property(
        batchArb,
        configs,
        fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 40, maxLength: 40 }),
        (rollouts, cfg, advs) => {
          const seq = rollouts.map((_, i) => advs[i % advs.length]!);
          const config = GrailConfigSchema.parse(cfg);
          const { w } = weigh(rollouts, seq, cfg);
          const lo = Math.fround(config.wMin);
          const hi = Math.fround(config.wMax);
          const mean = Math.fround(config.wMean);
          rollouts.forEach((r, i) => {
            const wi = w[i]!;
            if (!r.spans) return expect(wi.every((v) => v === 1)).toBe(true);
            const a = seq[i]!;
            const selected = config.symmetry === 'both' || (config.symmetry === 'wrong' ? a <= 0 : a > 0);
            const { open, content, close } = r.spans;
            for (let t = 0; t < r.length; t++) {
              const inOpen = t >= open[0] && t < open[1];
              const inContent = t >= content[0] && t < content[1];
              const inClose = t >= close[0] && t < close[1];
              const post = t >= close[1];
              if (!selected && !config.overrideExcluded) expect(wi[t]).toBe(1);
              else if (inContent) expect(wi[t]).toBe(hi);
              else if (inOpen || inClose || post) expect(wi[t]).toBe(mean);
              else if (selected) {
                expect(wi[t]).toBeGreaterThanOrEqual(lo);
                expect(wi[t]).toBeLessThanOrEqual(hi);
              } else expect(wi[t]).toBe(1);
            }
          });
        },
      ),
    );
  });
});

describe('grail errors', () => {
  it('rejects a NaN or negative score naming the rollout and token', () => {
    const rollouts: TestRollout[] = [
      { group: 0, reward: 0, length: 2, scores: [1, 1], spans: { open: [0, 1], content: [1, 1], close: [1, 2] } },
      { group: 0, reward: 0, length: 3, scores: [1, -0.5, 1], spans: { open: [0, 1], content: [1, 1], close: [1, 2] } },
    ];
    let err: unknown;
    try {
      weigh(rollouts, [0, 0]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AdvantagesError);
    expect((err as AdvantagesError).code).toBe('invalid_signal');
    expect((err as AdvantagesError).location.rollout).toBe(1);
    expect((err as Error).message).toMatch(/rollout 1, field saliency\.gradXEmb: score of completion token 1 is -0\.5/);
  });
  it('names the missing signal and what is available', () => {
    const { batch } = makeBatch([{ group: 0, reward: 1, length: 2 }]);
    const run = () => prepareEstimator('grail').estimate(batch, new Signals(2, { 'saliency.noisyKl': new Float32Array(2) }));
    expect(run).toThrow(AdvantagesError);
    expect(run).toThrow(expect.objectContaining({ code: 'missing_signal', location: { field: 'saliency.gradXEmb' } }));
    expect(run).toThrow(/estimator grail needs signal saliency\.gradXEmb; available: saliency\.noisyKl/);
  });
  it('rejects wMin > wMean and lists every bad field before any work', () => {
    expect(() => prepareEstimator('grail', { wMin: 2 })).toThrow(
      /invalid estimator grail configuration: wMin: need wMin <= wMean <= wMax, found 2, 1, 5/,
    );
    // @ts-expect-error on purpose: the run-time check of a value of the wrong type
    expect(() => prepareEstimator('grpo+grail', { wMin: 2, bessel: 'yes', stdEps: -1 })).toThrow(
      /bessel: .*expected boolean.*; stdEps: .*>=0/,
    );
    expect(() => prepareEstimator('grpo+grail', { wMin: 2 })).toThrow(/grpo\+grail configuration: wMin: need wMin <= wMean <= wMax/);
    // @ts-expect-error on purpose: the run-time check of a value outside the enum
    expect(() => prepareEstimator('grail', { symmetry: 'all' })).toThrow(/symmetry: .*"wrong", "correct", "both"/);
  });
});
