import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { grpo } from './grpo.js';
import { drGrpo } from './dr-grpo.js';
import { rloo } from './rloo.js';
import { reinforcePpBaseline } from './reinforce-pp-baseline.js';
import { batchArb, makeBatch, type TestRollout } from '../test-utils/batches.js';
import type { SequenceBaseline } from '../types.js';

function run(baseline: SequenceBaseline<any>, rollouts: TestRollout[], config: Record<string, unknown> = {}) {
  const { batch } = makeBatch(rollouts);
  const out = new Float64Array(batch.numRollouts);
  const metrics = baseline.compute(batch, baseline.configSchema.parse(config), out);
  return { out: Array.from(out), metrics };
}

const group = (rewards: number[], g = 0, length = 2): TestRollout[] => rewards.map((reward) => ({ group: g, reward, length }));
// rewards 1,0,0,1,1: mean 0.6; squared deviations 0.16 x3 + 0.36 x2 = 1.2
const five = group([1, 0, 0, 1, 1]);

describe('grpo', () => {
  it('divides by the Bessel-corrected std plus eps', () => {
    const std = Math.sqrt(1.2 / 4);
    const { out } = run(grpo, five);
    expect(out[0]).toBeCloseTo(0.4 / (std + 1e-6), 12);
    expect(out[1]).toBeCloseTo(-0.6 / (std + 1e-6), 12);
    expect(out[0]).toBeCloseTo(0.7302954, 6);
  });
  it('divides by the population std when bessel is off, with its own eps', () => {
    const { out } = run(grpo, five, { bessel: false, stdEps: 1e-4 });
    expect(out[0]).toBeCloseTo(0.4 / (Math.sqrt(0.24) + 1e-4), 12);
    expect(out[2]).toBeCloseTo(-0.6 / (Math.sqrt(0.24) + 1e-4), 12);
  });
});

describe('grpo with scaleRewards: batch (TRL)', () => {
  it('divides by the std of every reward in the batch; the mean stays the group’s', () => {
    // rewards 1, 0 | 1, 1: batch mean 0.75, squared deviations 0.0625 x3 + 0.5625 = 0.75, Bessel var 0.25
    const rollouts = [...group([1, 0], 0), ...group([1, 1], 1)];
    const { out, metrics } = run(grpo, rollouts, { scaleRewards: 'batch' });
    expect(out[0]).toBeCloseTo(0.5 / (0.5 + 1e-6), 12);
    expect(out[1]).toBeCloseTo(-0.5 / (0.5 + 1e-6), 12);
    expect(out.slice(2)).toEqual([0, 0]);
    expect(metrics.reward_std_batch).toBeCloseTo(0.5, 12);
    // the group std would be sqrt(0.5): a different number, so the option is not a no-op
    expect(run(grpo, rollouts).out[0]).toBeCloseTo(0.5 / (Math.sqrt(0.5) + 1e-6), 12);
  });
  it('couples the batch only under that option', () => {
    const coupled = grpo.batchCoupled as (c: ReturnType<typeof grpo.configSchema.parse>) => boolean;
    expect(coupled(grpo.configSchema.parse({ scaleRewards: 'batch' }))).toBe(true);
    expect(coupled(grpo.configSchema.parse({}))).toBe(false);
  });
});

describe('dr-grpo and rloo', () => {
  it('dr-grpo subtracts the group mean only', () => {
    expect(run(drGrpo, five).out.map((v) => +v.toFixed(12))).toEqual([0.4, -0.6, -0.6, 0.4, 0.4]);
  });
  it('rloo subtracts the mean of the other rollouts', () => {
    // r=1: others (0+0+1+1)/4 = 0.5 -> 0.5; r=0: others 3/4 -> -0.75
    expect(run(rloo, five).out.map((v) => +v.toFixed(12))).toEqual([0.5, -0.75, -0.75, 0.5, 0.5]);
  });
});

describe('reinforce-pp-baseline', () => {
  it('whitens the group-centred rewards over all tokens, length-weighted', () => {
    // x = [0.5, -0.5] with lengths 1 and 3; tokens 0.5, -0.5 x3: mean -0.25,
    // sum of squares 0.75^2 + 3 * 0.25^2 = 0.75, var = 0.75 / 3 = 0.25
    const rollouts: TestRollout[] = [
      { group: 0, reward: 1, length: 1 },
      { group: 0, reward: 0, length: 3 },
      { group: 1, reward: 1, length: 5 },
      { group: 1, reward: 1, length: 5 },
    ];
    const { out, metrics } = run(reinforcePpBaseline, rollouts);
    expect(out[0]).toBeCloseTo(0.75 / Math.sqrt(0.25 + 1e-8), 12);
    expect(out[1]).toBeCloseTo(-0.25 / Math.sqrt(0.25 + 1e-8), 12);
    expect(out.slice(2)).toEqual([0, 0]); // a group without signal stays 0 and is left out of the statistics
    expect(metrics.whiten_mean).toBeCloseTo(-0.25, 12);
    expect(metrics.frac_reward_zero_std).toBe(0.5);
  });
  it('with degenerateGroups: whiten, keeps degenerate groups in the statistics as verl does', () => {
    // x: 0.5 (1 token), -0.5 (3 tokens) | 0, 0 (equal rewards, 2 tokens each) | 0.75 (a group of one: verl's mean is 0)
    const rollouts: TestRollout[] = [
      { group: 0, reward: 1, length: 1 },
      { group: 0, reward: 0, length: 3 },
      { group: 1, reward: 1, length: 2 },
      { group: 1, reward: 1, length: 2 },
      { group: 2, reward: 0.75, length: 1 },
    ];
    const x = [0.5, -0.5, 0, 0, 0.75];
    const len = [1, 3, 2, 2, 1];
    const N = 9;
    const mu = x.reduce((s, v, i) => s + v * len[i]!, 0) / N; // (0.5 - 1.5 + 0.75) / 9
    const variance = x.reduce((s, v, i) => s + len[i]! * (v - mu) ** 2, 0) / (N - 1);
    const { out, metrics } = run(reinforcePpBaseline, rollouts, { degenerateGroups: 'whiten' });
    out.forEach((a, i) => expect(a).toBeCloseTo((x[i]! - mu) / Math.sqrt(variance + 1e-8), 12));
    expect(out[2]).not.toBe(0); // a group without signal gets -mu / sigma
    expect(metrics.whiten_mean).toBeCloseTo(mu, 12);
  });
  it('is all zeros when no group carries signal', () => {
    expect(run(reinforcePpBaseline, [...group([1, 1]), ...group([0], 1)]).out).toEqual([0, 0, 0]);
  });
});

describe('degenerate groups (every baseline)', () => {
  const all = [grpo, drGrpo, rloo, reinforcePpBaseline] as SequenceBaseline<any>[];
  const rollouts = [...group([0.7], 0), ...group([1, 1, 1], 1), ...group([0, 0], 2), ...group([1, 0], 3)];
  it.each(all.map((b) => [b.name, b] as const))('%s gives singletons and equal-reward groups advantage exactly 0', (_name, baseline) => {
    const { out, metrics } = run(baseline, rollouts);
    expect(out.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(out[6]).toBeGreaterThan(0);
    expect(out[7]).toBeLessThan(0);
    expect(metrics.frac_reward_zero_std).toBe(6 / 8);
    expect(metrics.num_groups).toBe(4);
  });
});

describe('properties', () => {
  const groupSums = (rollouts: TestRollout[], out: number[]) => {
    const sums = new Map<number, number>();
    rollouts.forEach((r, i) => sums.set(r.group, (sums.get(r.group) ?? 0) + out[i]!));
    return [...sums.values()];
  };
  it('grpo and dr-grpo advantages sum to zero in every group', () => {
    fc.assert(
      fc.property(batchArb, (rollouts) => {
        for (const b of [grpo, drGrpo, rloo] as SequenceBaseline<any>[]) {
          const { out } = run(b, rollouts);
          for (const s of groupSums(rollouts, out)) expect(Math.abs(s)).toBeLessThan(1e-6 * (1 + rollouts.length));
        }
      }),
    );
  });
  it('dr-grpo is invariant to adding a constant to a group’s rewards', () => {
    fc.assert(
      fc.property(batchArb, fc.integer({ min: -8, max: 8 }), (rollouts, c) => {
        // a power-of-two-friendly constant keeps the float32 rewards exact
        const shifted = rollouts.map((r) => (r.group === 0 ? { ...r, reward: Math.fround(r.reward + c / 4) } : r));
        const a = run(drGrpo, rollouts).out;
        const b = run(drGrpo, shifted).out;
        a.forEach((v, i) => expect(b[i]).toBeCloseTo(v, 5));
      }),
    );
  });
});
