import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Signals, batchFromRows } from '@rlvr/core';
import { defineMethod } from './method.js';
import { prepareEstimator } from './prepare.js';
import { getEstimator, registerEstimator } from './registry.js';
import { decodeState, encodeState } from './state.js';
import type { EstimatorState } from './types.js';

const batch = batchFromRows([
  { group: 0, reward: 1, prompt: [1], completion: [2, 3] },
  { group: 0, reward: 0, prompt: [1], completion: [4] },
  { group: 1, reward: 0.5, prompt: [1], completion: [5, 6, 7] },
]);

/**
 * A stateful method of the general contract: advantage = reward - running mean of every reward seen
 * so far (this batch included), plus a per-rollout bonus signal; the state is the count and the sum.
 */
const running = defineMethod({
  name: 'test-running-mean',
  description: 'reward minus the running mean reward, plus a bonus',
  configSchema: z.strictObject({ bonusScale: z.number().default(1) }),
  needs: ['test.bonus'],
  batchCoupled: false,
  compute({ batch: b, signals, config, state }, out) {
    const prev = (state as { n: number; sum: Float64Array } | undefined) ?? { n: 0, sum: new Float64Array(1) };
    const bonus = signals.getPerRollout('test.bonus', 'estimator test-running-mean').values;
    let sum = prev.sum[0]!;
    for (let i = 0; i < b.numRollouts; i++) sum += b.rewards[i]!;
    const n = prev.n + b.numRollouts;
    for (let i = 0; i < b.numRollouts; i++)
      out.fill(b.rewards[i]! - sum / n + config.bonusScale * bonus[i]!, b.completionOffsets[i]!, b.completionOffsets[i + 1]!);
    return { metrics: { running_mean: sum / n }, state: { n, sum: Float64Array.of(sum) } };
  },
});
registerEstimator(running);

const signals = () => Signals.forBatch(batch).setPerRollout('test.bonus', Float32Array.from([0, 0.25, 0]));

describe('the general contract (defineMethod)', () => {
  it('writes per-token advantages from rewards, a per-rollout signal and the carried state', () => {
    const est = prepareEstimator('test-running-mean', { bonusScale: 2 });
    expect(getEstimator('test-running-mean')).toBe(running);
    expect(est.batchCoupled).toBe(false);
    const first = est.estimate(batch, signals());
    const m1 = 1.5 / 3;
    expect(Array.from(first.advantages)).toEqual([1 - m1, 1 - m1, 0 - m1 + 0.5, 0.5 - m1, 0.5 - m1, 0.5 - m1].map(Math.fround));
    expect(first.metrics).toEqual({ running_mean: m1 });
    // what the method did not report: weights 1, sequence advantages the rollout means
    expect(Array.from(first.weights)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(first.sequenceAdvantages[2]).toBeCloseTo(0.5 - m1, 6);
    const second = est.estimate(batch, signals(), first.state);
    expect(second.metrics.running_mean).toBe(3 / 6);
    // the state survives a JSON round trip (a checkpoint) bit for bit
    const back = decodeState(JSON.parse(JSON.stringify(encodeState(first.state))));
    expect(est.estimate(batch, signals(), back)).toEqual(second);
  });

  it('checks the signals before any work, naming the estimator and the missing signal', () => {
    const est = prepareEstimator('test-running-mean');
    expect(() => est.estimate(batch, Signals.forBatch(batch))).toThrow(
      'estimator test-running-mean needs signal test.bonus; available: (none)',
    );
    expect(() => est.estimate(batch, new Signals(5))).toThrow('signals hold 5 tokens per signal but the batch has 6 completion tokens');
    expect(() => prepareEstimator('test-running-mean', { bonusScale: 'x' })).toThrow(
      /invalid estimator test-running-mean configuration: bonusScale/,
    );
    expect(defineMethod({ ...running, name: 'x', batchCoupled: undefined, compute: () => ({}) }).batchCoupled).toBe(true);
  });
});

describe('encodeState / decodeState', () => {
  it('round-trip JSON values, typed arrays and the numbers JSON cannot hold, bit for bit', () => {
    const state: EstimatorState = {
      n: 3,
      special: [Number.NaN, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
      f32: Float32Array.of(0.1, -0, Number.NaN),
      f64: Float64Array.of(Math.PI, 1e-310),
      i32: Int32Array.of(-1, 2 ** 31 - 1),
      u8: Uint8Array.of(0, 255),
      nested: { label: 'x', ok: true, none: null },
    };
    const back = decodeState(JSON.parse(JSON.stringify(encodeState(state)))) as Record<string, unknown>;
    expect(back).toEqual(state);
    expect(Object.is((back.special as number[])[1], -0)).toBe(true);
    expect(back.f64).toBeInstanceOf(Float64Array);
    expect(encodeState(undefined)).toBeNull();
  });

  it('refuses what it cannot write exactly, naming the path', () => {
    expect(() => encodeState({ a: [new Map()] } as never)).toThrow(/field state\.a\.0: estimator state must be JSON values, typed arrays/);
    expect(() => encodeState({ $typed: 1 })).toThrow('field state: estimator state keys may not start with "$" (found $typed)');
  });
});

describe('a rollout stage', () => {
  it('travels from the method to the estimator, and a prepared estimator binds its options', async () => {
    const routing = defineMethod({
      name: 'test-routing',
      description: 're-samples every group whose first reward is below tau',
      configSchema: z.strictObject({ tau: z.number().default(0.5) }),
      needs: [],
      compute: (_input, out) => {
        out.fill(0);
        return {};
      },
      rolloutStage: {
        route: (groups, c) => groups.filter((g) => g.rewards[0]! < c.tau).map((g) => ({ group: g.group, question: `${g.question}?` })),
        grade: (text, _g, _r, c) => (text === 'ok' ? c.tau : 0),
      },
    });
    const prepared = prepareEstimator(routing, { tau: 0.75 });
    const stage = prepared.rolloutStage!;
    expect(stage.method).toBe('test-routing');
    const group = (g: number, r: number) => ({
      group: g,
      question: 'q',
      answer: '1',
      aux: undefined,
      source: undefined,
      rewards: Float32Array.of(r),
      texts: [''],
      lengths: Int32Array.of(0),
    });
    expect(await stage.route([group(0, 1), group(1, 0.5)])).toEqual([{ group: 1, question: 'q?' }]);
    expect(await stage.grade('ok', group(1, 0.5), { group: 1, question: 'q?' })).toBe(0.75);
    expect(prepareEstimator(running).rolloutStage).toBeUndefined();
  });
});
