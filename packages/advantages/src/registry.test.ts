import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { AdvantagesError } from './errors.js';
import { composeEstimator } from './compose.js';
import { baselines, estimators, getEstimator, registerBaseline, registerWeighting, weightings } from './registry.js';
import { prepareEstimator } from './prepare.js';
import { grpo } from './baselines/grpo.js';
import { drGrpo } from './baselines/dr-grpo.js';
import { grail } from './weightings/grail.js';
import { uniform } from './weightings/uniform.js';
import type { SequenceBaseline, TokenWeighting } from './types.js';
import { batchArb, makeBatch, slices, type TestRollout } from './test-utils/batches.js';

describe('registries', () => {
  it('hold the built-in parts and named estimators', () => {
    expect(baselines.names()).toEqual(expect.arrayContaining(['dr-grpo', 'grpo', 'reinforce-pp-baseline', 'rloo']));
    expect(weightings.names()).toEqual(expect.arrayContaining(['grail', 'oar-g', 'uniform']));
    expect(estimators.names()).toEqual(expect.arrayContaining(['dr-grpo', 'grail', 'grpo', 'oar-g', 'reinforce-pp-baseline', 'rloo']));
    expect(getEstimator('grail').baseline).toBe(drGrpo);
    expect(getEstimator('grail').weighting).toBe(grail);
    expect(getEstimator('oar-g').needs).toEqual(['saliency.noisyKl']);
    expect(getEstimator('grpo').needs).toEqual([]);
  });
  it('composes any BASELINE+WEIGHTING by name, once', () => {
    const e = getEstimator('rloo+oar-g');
    expect(e.name).toBe('rloo+oar-g');
    expect(e.baseline?.name).toBe('rloo');
    expect(e.weighting?.name).toBe('oar-g');
    expect(getEstimator('rloo+oar-g')).toBe(e);
  });
  it('throws on a taken name with another implementation; re-registering the same object is harmless', () => {
    const impostor: SequenceBaseline = { ...grpo } as SequenceBaseline;
    expect(() => registerBaseline(impostor)).toThrow(AdvantagesError);
    expect(() => registerBaseline(impostor)).toThrow(expect.objectContaining({ code: 'name_taken' }));
    expect(() => registerBaseline(impostor)).toThrow(/sequence baseline "grpo" is already registered/);
    expect(() => registerWeighting({ ...grail } as TokenWeighting)).toThrow(/token weighting "grail" is already registered/);
    expect(registerBaseline(grpo as SequenceBaseline)).toBe(grpo);
  });
  it('lists the known names for an unknown estimator, baseline or weighting', () => {
    const err = (() => {
      try {
        getEstimator('graill');
      } catch (e) {
        return e as AdvantagesError;
      }
    })()!;
    expect(err).toBeInstanceOf(AdvantagesError);
    expect(err.code).toBe('unknown_name');
    expect(err.message).toMatch(
      /unknown advantage estimator "graill"; known estimators: dr-grpo, grail, grpo, oar-g, reinforce-pp-baseline, rloo/,
    );
    expect(err.message).toMatch(/weightings grail, oar-g, uniform/);
    expect(() => getEstimator('ppo+grail')).toThrow(/\(unknown sequence baseline "ppo"\)/);
    expect(() => getEstimator('grpo+saliency')).toThrow(/\(unknown token weighting "saliency"\)/);
  });
  it('fails loudly when a baseline and a weighting declare the same option', () => {
    const clashing: TokenWeighting = {
      ...uniform,
      name: 'clashing',
      configSchema: z.strictObject({ stdEps: z.number().default(1) }),
    } as TokenWeighting;
    const err = (() => {
      try {
        composeEstimator(grpo as SequenceBaseline, clashing);
      } catch (e) {
        return e as AdvantagesError;
      }
    })()!;
    expect(err).toBeInstanceOf(AdvantagesError);
    expect(err.code).toBe('config_clash');
    expect(err.message).toMatch(/estimator grpo\+clashing: option "stdEps" is declared by both baseline grpo and weighting clashing/);
  });
});

describe('configuration', () => {
  it('fills defaults and merges both parts’ options', () => {
    expect(prepareEstimator('grail').config).toEqual({
      sigmaW: 0.5,
      wMean: 1,
      wMin: 0.5,
      wMax: 5,
      eps: 1e-8,
      symmetry: 'wrong',
      overrideExcluded: true,
    });
    expect(prepareEstimator('oar-g').config).toEqual({ tau: 0.4, beta: 2, floor: 0.1, eps: 1e-12 });
    expect(prepareEstimator('grpo+grail', { bessel: false }).config).toMatchObject({ bessel: false, stdEps: 1e-6, sigmaW: 0.5 });
  });
  it('rejects unknown keys and bad values, naming each field', () => {
    // @ts-expect-error on purpose: the run-time check of an option the estimator does not have
    expect(() => prepareEstimator('grpo', { sigmaW: 1 })).toThrow(/invalid estimator grpo configuration: unknown key: sigmaW/);
    expect(() => prepareEstimator('oar-g', { tau: 1.5, beta: -1 })).toThrow(/tau: .*<=1.*; beta: .*>=0/);
    const err = (() => {
      try {
        prepareEstimator('grail', { eps: 0 });
      } catch (e) {
        return e as AdvantagesError;
      }
    })()!;
    expect(err.code).toBe('invalid_config');
  });
});

describe('estimators', () => {
  const names = ['grpo', 'dr-grpo', 'rloo', 'reinforce-pp-baseline', 'grail', 'oar-g', 'grpo+grail', 'rloo+oar-g'];
  it('uniform weighting reproduces the baseline exactly', () => {
    fc.assert(
      fc.property(batchArb, (rollouts) => {
        const { batch, signals } = makeBatch(rollouts);
        for (const b of baselines.names()) {
          const r = prepareEstimator(`${b}+uniform`).estimate(batch, signals);
          const seq = new Float64Array(batch.numRollouts);
          baselines.get(b).compute(batch, baselines.get(b).configSchema.parse({}), seq);
          slices(batch, r.advantages).forEach((adv, i) => adv.forEach((v) => expect(v).toBe(Math.fround(seq[i]!))));
          expect(Array.from(r.weights).every((w) => w === 1)).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });
  it('advantages are sequence advantage times weight, token by token', () => {
    fc.assert(
      fc.property(batchArb, fc.constantFrom(...names), (rollouts, name) => {
        const { batch, signals } = makeBatch(rollouts);
        const r = prepareEstimator(name).estimate(batch, signals);
        for (let i = 0; i < batch.numRollouts; i++) {
          for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++) {
            expect(r.advantages[t]).toBe(Math.fround(r.sequenceAdvantages[i]! * r.weights[t]!));
          }
        }
      }),
      { numRuns: 50 },
    );
  });
  it('permuting rollouts within a group permutes the outputs', () => {
    fc.assert(
      fc.property(batchArb, fc.constantFrom(...names), fc.infiniteStream(fc.nat()), (rollouts, name, randoms) => {
        // shuffle each group's rollouts in place (groups stay consecutive)
        const perm = rollouts.map((_, i) => i);
        let start = 0;
        for (let i = 1; i <= rollouts.length; i++) {
          if (i === rollouts.length || rollouts[i]!.group !== rollouts[start]!.group) {
            for (let k = i - 1; k > start; k--) {
              const j = start + (randoms.next().value % (k - start + 1));
              [perm[k], perm[j]] = [perm[j]!, perm[k]!];
            }
            start = i;
          }
        }
        const a = makeBatch(rollouts);
        const b = makeBatch(perm.map((p) => rollouts[p]!));
        const ra = slices(a.batch, prepareEstimator(name).estimate(a.batch, a.signals).advantages);
        const rb = slices(b.batch, prepareEstimator(name).estimate(b.batch, b.signals).advantages);
        perm.forEach((p, i) => rb[i]!.forEach((v, t) => expect(v).toBeCloseTo(ra[p]![t]!, 5)));
      }),
      { numRuns: 60 },
    );
  });
  it('reports weight statistics split by correct and wrong rollouts', () => {
    const rollouts: TestRollout[] = [
      { group: 0, reward: 1, length: 3, scores: [1, 1, 1], spans: { open: [0, 1], content: [1, 2], close: [2, 3] } },
      { group: 0, reward: 0, length: 2, scores: [1, 1], spans: null },
    ];
    const { batch, signals } = makeBatch(rollouts);
    const m = prepareEstimator('grail').estimate(batch, signals).metrics;
    // correct: weights 1, 5, 1 (excluded by `wrong`, overrides still apply); wrong: 1, 1
    expect(m.weight_mean_correct).toBeCloseTo(7 / 3, 12);
    expect(m.weight_std_correct).toBeCloseTo(Math.sqrt((1 + 25 + 1) / 3 - 49 / 9), 12);
    expect([m.weight_min_correct, m.weight_max_correct, m.weight_mean_wrong, m.weight_std_wrong]).toEqual([1, 5, 1, 0]);
    expect(m.weight_mean).toBeCloseTo(9 / 5, 12);
    expect(m.fallback_rate).toBe(0.5);
    expect(m.excluded_rate).toBe(0.5);
    expect(m.frac_reward_zero_std).toBe(0);
    // dr-grpo: A = 0.5, -0.5; |A| token mean 0.5 raw, (0.5 * 7 + 0.5 * 2) / 5 weighted
    expect(m.advantage_abs_mean_raw).toBeCloseTo(0.5, 12);
    expect(m.advantage_abs_mean).toBeCloseTo(0.9, 12);
    const none = prepareEstimator('grail').estimate(
      makeBatch([{ group: 0, reward: 0, length: 1 }]).batch,
      makeBatch([{ group: 0, reward: 0, length: 1 }]).signals,
    ).metrics;
    expect(none.weight_mean_correct).toBeNaN();
    expect(none.advantage_scale_ratio_tokens).toBeNaN(); // every A is 0
    expect(none.advantages_scale_ratio).toBe(0); // the reference's 0 / (0 + 1e-8)
  });
  it('names both ratios of |A| means: ours over tokens, the reference’s over rollouts', () => {
    // dr-grpo, weights 1: A = 2/3, -1/3, -1/3 on 1, 3 and 1 tokens
    const { batch, signals } = makeBatch([
      { group: 0, reward: 1, length: 1 },
      { group: 0, reward: 0, length: 3 },
      { group: 0, reward: 0, length: 1 },
    ]);
    const m = prepareEstimator('dr-grpo').estimate(batch, signals).metrics;
    expect(m.advantage_abs_mean_raw).toBeCloseTo((2 / 3 + 3 / 3 + 1 / 3) / 5, 12); // token mean: 0.4
    expect(m.advantage_abs_mean_raw_rollouts).toBeCloseTo(4 / 9, 12); // rollout mean (`advantages_raw_abs_mean`)
    expect(m.advantage_scale_ratio_tokens).toBeCloseTo(1, 6); // uniform weights change nothing per token
    expect(m.advantages_scale_ratio).toBeCloseTo(0.4 / (4 / 9 + 1e-8), 12); // the reference's: 0.9 although nothing was weighted
  });
  it('rejects signals that do not match the batch', () => {
    const { batch } = makeBatch([{ group: 0, reward: 1, length: 3 }]);
    const { signals } = makeBatch([{ group: 0, reward: 1, length: 2 }]);
    expect(() => prepareEstimator('grail').estimate(batch, signals)).toThrow(/signals hold 2 tokens per signal but the batch has 3/);
  });
});
