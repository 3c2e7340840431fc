import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { SIGNAL_NAMES, Signals, batchFromRows, type RolloutBatch } from '@rlvr/core';
import { entropyShapingEstimator, grpoEntropyShapingEstimator, shapeAdvantages } from './index.js';

registerEstimator(entropyShapingEstimator);
registerEstimator(grpoEntropyShapingEstimator);

interface Case {
  name: string;
  base: 'dr-grpo' | 'grpo';
  alpha: number;
  kappa: number;
  group: number[];
  reward: number[];
  lengths: number[];
  entropy: number[];
  advantages: number[];
  termMean: number | null;
}
/** Written by tools/fixtures/entropy-shaping/numpy_reference.py (float64 NumPy, from the formula). */
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/numpy-reference.json', import.meta.url), 'utf8')) as { cases: Case[] };

function batchOf(group: number[], reward: number[], lengths: number[]): RolloutBatch {
  let id = 0;
  return batchFromRows(
    group.map((g, i) => ({
      group: g,
      reward: reward[i]!,
      prompt: [1],
      completion: Array.from({ length: lengths[i]! }, () => 2 + (id++ % 7)),
    })),
  );
}

describe.each(fixture.cases.map((c) => [c.name, c] as const))('NumPy reference: %s', (_name, c) => {
  it('advantages and the mean shaping term within 1e-6', () => {
    const batch = batchOf(c.group, c.reward, c.lengths);
    const signals = Signals.forBatch(batch).set(SIGNAL_NAMES.entropy, Float32Array.from(c.entropy));
    const name = c.base === 'grpo' ? 'grpo-entropy-shaping' : 'entropy-shaping';
    const r = prepareEstimator(name, { alpha: c.alpha, kappa: c.kappa }).estimate(batch, signals);
    expect(r.advantages.length).toBe(c.advantages.length);
    let worst = 0;
    c.advantages.forEach((e, t) => (worst = Math.max(worst, Math.abs(r.advantages[t]! - e) / Math.max(1, Math.abs(e)))));
    expect(worst).toBeLessThan(1e-6);
    if (c.termMean === null) expect(r.metrics.entropy_shaping_term_mean).toBeNaN();
    else expect(Math.abs(r.metrics.entropy_shaping_term_mean! - c.termMean)).toBeLessThan(1e-6);
  });
});

/**
 * Float32 advantages and non-negative float32 entropies of one length. The advantages are 0 or normal
 * floats: a subnormal A (|A| < 2^-126) times (1 - 1/kappa) can round to a signed 0, which is not a flip.
 */
const advantage = fc.float({ min: -10, max: 10, noNaN: true }).filter((x) => x === 0 || Math.abs(x) >= 2 ** -126);
const tokens = fc.integer({ min: 0, max: 40 }).chain((n) =>
  fc.record({
    a: fc.array(advantage, { minLength: n, maxLength: n }),
    h: fc.array(fc.float({ min: 0, max: 12, noNaN: true }), { minLength: n, maxLength: n }),
  }),
);
const oneRollout = (n: number) => batchOf([0], [0], [n]);
const ulp = (x: number) => {
  const f = new Float32Array([Math.abs(x)]);
  const u = new Uint32Array(f.buffer);
  u[0]! += 1;
  return f[0]! - Math.abs(x);
};

describe('invariants (fast-check)', () => {
  it('the sign of every advantage is kept, and |shaped - A| <= |A| / kappa (to one float32 ulp)', () => {
    fc.assert(
      fc.property(
        tokens,
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.double({ min: 1.01, max: 10, noNaN: true }),
        ({ a, h }, alpha, kappa) => {
          const A = Float32Array.from(a);
          const out = new Float32Array(A.length);
          shapeAdvantages(oneRollout(A.length), A, Float32Array.from(h), alpha, kappa, out);
          for (let t = 0; t < A.length; t++) {
            expect(Math.sign(out[t]!)).toBe(Math.sign(A[t]!));
            expect(Math.abs(out[t]! - A[t]!)).toBeLessThanOrEqual(Math.abs(A[t]!) / kappa + ulp(out[t]!));
            expect(out[t]! - A[t]!).toBeGreaterThanOrEqual(0); // added: the term is never negative
          }
        },
      ),
    );
  });

  it('alpha = 0 gives the base advantages exactly (bit for bit, -0 included)', () => {
    fc.assert(
      fc.property(tokens, fc.double({ min: 1.01, max: 10, noNaN: true }), ({ a, h }, kappa) => {
        const A = Float32Array.from([...a, -0]);
        const out = new Float32Array(A.length);
        shapeAdvantages(oneRollout(A.length), A, Float32Array.from([...h, 1]), 0, kappa, out);
        expect(Buffer.from(out.buffer).equals(Buffer.from(A.buffer))).toBe(true);
      }),
    );
  });

  it('through the estimator, alpha = 0 is Dr. GRPO bit for bit', () => {
    const batch = batchOf([0, 0, 0, 1, 1], [1, 0, 0, 0.5, 0], [3, 2, 4, 1, 2]);
    const signals = Signals.forBatch(batch).set(SIGNAL_NAMES.entropy, Float32Array.from([0.1, 2, 3, 0, 1, 1, 1, 5, 0.3, 0.2, 4, 1]));
    const shaped = prepareEstimator('entropy-shaping', { alpha: 0 }).estimate(batch, signals);
    const dr = prepareEstimator('dr-grpo').estimate(batch, signals);
    expect(shaped.advantages).toEqual(dr.advantages);
    expect(shaped.sequenceAdvantages).toEqual(dr.sequenceAdvantages);
  });
});

describe('errors', () => {
  const batch = batchOf([0, 0], [1, 0], [2, 2]);
  it('options are checked (kappa > 1, alpha >= 0, no unknown keys, the base keys too)', () => {
    expect(() => prepareEstimator('entropy-shaping', { kappa: 1 })).toThrow(
      /invalid estimator entropy-shaping configuration: kappa: Too small/,
    );
    expect(() => prepareEstimator('entropy-shaping', { alpha: -1 })).toThrow(/alpha: Too small/);
    expect(() => prepareEstimator('entropy-shaping', { kapa: 2 })).toThrow(/unknown key: kapa/);
    expect(() => prepareEstimator('grpo-entropy-shaping', { scaleRewards: 'rollout' })).toThrow(
      /scaleRewards: must be one of "group", "batch"/,
    );
    expect(prepareEstimator('grpo-entropy-shaping', { bessel: false }).config).toEqual({
      alpha: 0.4,
      kappa: 2,
      bessel: false,
      stdEps: 1e-6,
      scaleRewards: 'group',
    });
  });
  it('a missing or bad entropy signal names the estimator, or the rollout and token', () => {
    const est = prepareEstimator('entropy-shaping');
    expect(est.needs).toEqual([SIGNAL_NAMES.entropy]);
    expect(() => est.estimate(batch, Signals.forBatch(batch))).toThrow(
      'estimator entropy-shaping needs signal policy.entropy; available: (none)',
    );
    const bad = Signals.forBatch(batch).set(SIGNAL_NAMES.entropy, Float32Array.from([0, 1, -0.5, 1]));
    expect(() => est.estimate(batch, bad)).toThrow(
      'rollout 1, field policy.entropy: policy.entropy must be finite and >= 0, found -0.5 at token 0',
    );
  });
});
