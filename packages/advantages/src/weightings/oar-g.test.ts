import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { oarG, OarGConfigSchema } from './oar-g.js';
import { batchArb, makeBatch, slices, type TestRollout } from '../test-utils/batches.js';

function weigh(rollouts: TestRollout[], config: Record<string, unknown> = {}) {
  const { batch, signals } = makeBatch(rollouts);
  const out = new Float32Array(signals.totalTokens);
  const metrics = oarG.compute(batch, signals, new Float64Array(batch.numRollouts), OarGConfigSchema.parse(config), out);
  return { w: slices(batch, out), metrics };
}

const answer = (n: number) => ({ open: [n, n], content: [n, n], close: [n, n] }) as TestRollout['spans'];
// ln(1 + s) = 0, 1, 2, 3, 4 -> normalised 0, .25, .5, .75, 1; floor(0.4 * 5) = 2 -> threshold 0.5
const ramp5 = [0, 1, 2, 3, 4].map((k) => Math.exp(k) - 1);

describe('oar-g weights, by hand', () => {
  it('thresholds at the floor(tau n)-th smallest, floors below, boosts above, renormalises', () => {
    const { w, metrics } = weigh([{ group: 0, reward: 1, length: 5, scores: ramp5, spans: answer(5) }]);
    // raw: max(0/.5, .1) = .1, .25/.5 = .5, 1, 1 + 2(.25/.5) = 2, 3; sum 6.6
    const expected = [0.1, 0.5, 1, 2, 3].map((v) => (v * 5) / 6.6);
    w[0]!.forEach((v, t) => expect(v).toBeCloseTo(expected[t]!, 5));
    expect(metrics.frac_below_threshold).toBe(0.4);
  });
  it('follows tau, beta and floor from the config', () => {
    // tau .2: floor(1) -> threshold .25; below: 0 -> max(0, .3) = .3; above: 1 + (v - .25)/.75
    const { w } = weigh([{ group: 0, reward: 1, length: 5, scores: ramp5, spans: answer(5) }], { tau: 0.2, beta: 1, floor: 0.3 });
    const raw = [0.3, 1, 1 + 0.25 / 0.75, 1 + 0.5 / 0.75, 2];
    const sum = raw.reduce((a, b) => a + b);
    w[0]!.forEach((v, t) => expect(v).toBeCloseTo((raw[t]! * 5) / sum, 5));
  });
  it('uses an order statistic, not an interpolated quantile, and strict < below it', () => {
    // normalised 0, 0, 1, 1: floor(1.6) = 1 -> threshold 0 -> nothing below; raw 1, 1, 3, 3
    const { w } = weigh([{ group: 0, reward: 1, length: 4, scores: [0, 0, 5, 5], spans: answer(4) }]);
    w[0]!.forEach((v, t) => expect(v).toBeCloseTo([0.5, 0.5, 1.5, 1.5][t]!, 5));
  });
  it('gives 1 to every token when all scores are equal (zero range) and without an answer', () => {
    expect(weigh([{ group: 0, reward: 1, length: 3, scores: [2, 2, 2], spans: answer(3) }]).w[0]).toEqual([1, 1, 1]);
    const none = weigh([{ group: 0, reward: 1, length: 3, scores: [0, 1, 9], spans: null }]);
    expect(none.w[0]).toEqual([1, 1, 1]);
    expect(none.metrics.fallback_rate).toBe(1);
  });
});

/** The slow, obviously-correct twin of the fast path (radix select on float32 bits): a sort. */
function twin(scores: number[], tau = 0.4, beta = 2, floor = 0.1, eps = 1e-12): number[] {
  const n = scores.length;
  const I = scores.map((s) => Math.log1p(s));
  const lo = Math.min(...I);
  const hi = Math.max(...I);
  const Ih = I.map((v) => (v - lo) / (hi - lo + eps));
  const thr = [...Ih].sort((a, b) => a - b)[Math.min(Math.floor(tau * n), n - 1)]!;
  const w = Ih.map((v) => (v < thr ? Math.max(v / (thr + eps), floor) : 1 + (beta * (v - thr)) / (1 - thr + eps)));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((v) => (v * n) / sum);
}

describe('oar-g fast path', () => {
  it('equals its slow twin on random rollouts, -0 and tiny scores included', () => {
    const score = fc.oneof(
      fc.constant(-0),
      fc.constant(0),
      fc.double({ min: 1e-12, max: 1e-6, noNaN: true }),
      fc.double({ min: 0, max: 50, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.array(score, { minLength: 1, maxLength: 60 }).map((a) => a.map(Math.fround)),
        (scores) => {
          const { w } = weigh([{ group: 0, reward: 1, length: scores.length, scores, spans: answer(scores.length) }]);
          const want = twin(scores);
          w[0]!.forEach((v, t) => expect(Math.abs(v - want[t]!)).toBeLessThan(1e-6 * Math.max(1, want[t]!)));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('oar-g properties', () => {
  it('weights average 1 over every rollout with an answer, and are positive', () => {
    const cfg = fc.record({
      tau: fc.double({ min: 0, max: 1, noNaN: true }),
      beta: fc.double({ min: 0, max: 4, noNaN: true }),
      floor: fc.oneof(fc.constant(0), fc.double({ min: 1e-3, max: 1, noNaN: true })),
    });
    fc.assert(
      fc.property(batchArb, cfg, (rollouts, config) => {
        const { w } = weigh(rollouts, config);
        rollouts.forEach((r, i) => {
          if (r.length === 0) return;
          const mean = w[i]!.reduce((a, b) => a + b, 0) / r.length;
          expect(Math.abs(mean - 1)).toBeLessThan(1e-6);
          if (config.floor > 0) expect(Math.min(...w[i]!)).toBeGreaterThan(0);
        });
      }),
    );
  });
});
