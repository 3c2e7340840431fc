import { describe, expect, it } from 'vitest';
import { Signals, batchFromRows } from '@rlvr/core';
import { AdvantagesError, estimators, getEstimator, prepareEstimator } from '@rlvr/advantages';
import { entropyWeighting, registerEntropyWeighting } from './index.js';

// Everything here goes through the public API of @rlvr/advantages (its built dist).
registerEntropyWeighting();

const rows = [
  { group: 0, completion: [11, 12, 13, 14], reward: 1 },
  { group: 0, completion: [21, 22], reward: 0 },
];
const batch = batchFromRows(rows);
// rollout 0: H = 0, 1, 2, 5 (mean 2); rollout 1: H = 3, 3 (mean 3)
const signals = new Signals(6, { 'policy.entropy': Float32Array.from([0, 1, 2, 5, 3, 3]) });

describe('entropy weighting, registered from outside the package', () => {
  it('composes with any baseline by name', () => {
    expect(getEstimator('grpo+entropy').weighting).toBe(entropyWeighting);
    expect(getEstimator('rloo+entropy').needs).toEqual(['policy.entropy']);
    expect(estimators.names()).toContain('dr-grpo-entropy');
  });

  it('computes w = clip((H + eps) / (mean H + eps)) by hand', () => {
    const r = prepareEstimator('dr-grpo-entropy').estimate(batch, signals);
    // rollout 0: 0/2 -> clipped to 0.25, 0.5, 1, 2.5; rollout 1: 1, 1 (eps 1e-6 shifts the 7th digit)
    const expected = [0.25, 0.5, 1, 2.5, 1, 1];
    Array.from(r.weights).forEach((w, t) => expect(w).toBeCloseTo(expected[t]!, 5));
    // Dr. GRPO: A = +0.5, -0.5
    const adv = expected.map((w, t) => (t < 4 ? 0.5 : -0.5) * w);
    Array.from(r.advantages).forEach((a, t) => expect(a).toBeCloseTo(adv[t]!, 5));
    expect(r.metrics.entropy_clip_frac).toBeCloseTo(1 / 6, 12);
  });

  it('takes its options through the merged schema, with the baseline’s', () => {
    const r = prepareEstimator('grpo+entropy', { power: 2, entropyWMax: 3, bessel: false }).estimate(batch, signals);
    // rollout 0: (0.5)^2 = 0.25, 1, (2.5)^2 = 6.25 -> 3
    expect(Array.from(r.weights.subarray(1, 4)).map((w) => +w.toFixed(4))).toEqual([0.25, 1, 3]);
    expect(() => prepareEstimator('grpo+entropy', { entropyWMin: 5 })).toThrow(/entropyWMin: must not exceed entropyWMax \(4\)/);
    // @ts-expect-error sigmaW is GRAIL's: the option types declared in index.ts reject it at compile time too
    expect(() => prepareEstimator('grpo+entropy', { sigmaW: 1 })).toThrow(/unknown key: sigmaW/);
    // @ts-expect-error power is a number
    expect(() => prepareEstimator('dr-grpo-entropy', { power: 'high' })).toThrow(/power: .*expected number/);
  });

  it('says which signal is missing', () => {
    const run = () => prepareEstimator('grpo+entropy').estimate(batch, new Signals(6));
    expect(run).toThrow(AdvantagesError);
    expect(run).toThrow(/estimator grpo\+entropy needs signal policy\.entropy/);
  });

  it('cannot take a built-in name', async () => {
    const { registerWeighting } = await import('@rlvr/advantages');
    expect(() => registerWeighting({ ...entropyWeighting, name: 'grail' })).toThrow(/token weighting "grail" is already registered/);
  });
});
