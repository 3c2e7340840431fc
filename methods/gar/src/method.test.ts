import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { Rng, Signals, batchFromRows } from '@rlvr/core';
import { selectBackend } from '@rlvr/policy';
import {
  GAR_COSINE,
  cosines,
  crossInner,
  garEstimator,
  gradTimesHidden,
  selfInner,
  shapedRewards,
  vectorCosines,
  GarConfigSchema,
} from './index.js';
import { tf } from './tf.js';

registerEstimator(garEstimator);
beforeAll(() => selectBackend({ backend: 'cpu' }));

const rollouts = fc.array(
  fc.record({
    group: fc.integer({ min: 0, max: 3 }),
    reward: fc.constantFrom(0, 1),
    cos: fc.float({ min: -1, max: 1, noNaN: true }),
    length: fc.integer({ min: 1, max: 4 }),
  }),
  { minLength: 1, maxLength: 12 },
);

function run(rs: { group: number; reward: number; cos: number; length: number }[], config: Record<string, unknown>) {
  const batch = batchFromRows(
    rs.map((r) => ({ group: r.group, reward: r.reward, prompt: [1], completion: Array.from({ length: r.length }, () => 3) })),
  );
  const signals = Signals.forBatch(batch).setPerRollout(GAR_COSINE, Float32Array.from(rs.map((r) => r.cos)));
  return { batch, signals, gar: prepareEstimator('gar', config).estimate(batch, signals) };
}

describe('invariants (fast-check)', () => {
  it('beta = 0 gives exactly Dr. GRPO (normalize mean) and GRPO (normalize std)', () => {
    fc.assert(
      fc.property(rollouts, fc.constantFrom('hinge', 'linear'), (rs, bonus) => {
        const { batch, signals, gar } = run(rs, { beta: 0, bonus });
        expect(gar.advantages).toEqual(prepareEstimator('dr-grpo').estimate(batch, signals).advantages);
        const std = run(rs, { beta: 0, bonus, normalize: 'std' }).gar;
        expect(std.advantages).toEqual(prepareEstimator('grpo').estimate(batch, signals).advantages);
      }),
    );
  });

  it('mean-centering: sequence advantages sum to 0 in every group; every correct rollout outranks every wrong one (the default at any beta, linear on all rollouts with beta < 1/2)', () => {
    const configs = fc.oneof(
      fc.record({ beta: fc.double({ min: 0, max: 5, noNaN: true }) }),
      fc.record({ beta: fc.double({ min: 0, max: 0.49, noNaN: true }), bonus: fc.constant('linear'), apply: fc.constant('all') }),
    );
    fc.assert(
      fc.property(rollouts, configs, (rs, config) => {
        const { gar } = run(rs, config);
        for (const g of new Set(rs.map((r) => r.group))) {
          const rows = rs.flatMap((r, i) => (r.group === g ? [i] : []));
          const sum = rows.reduce((s, i) => s + gar.sequenceAdvantages[i]!, 0);
          expect(Math.abs(sum)).toBeLessThan(1e-5);
          for (const i of rows)
            for (const j of rows)
              if (rs[i]!.reward > rs[j]!.reward) expect(gar.sequenceAdvantages[i]!).toBeGreaterThan(gar.sequenceAdvantages[j]!);
        }
      }),
    );
  });

  it('apply and positiveOnly: rollouts outside `apply` keep their reward; positiveOnly never lowers one', () => {
    fc.assert(
      fc.property(rollouts, fc.constantFrom('correct', 'wrong') as fc.Arbitrary<'correct' | 'wrong'>, (rs, apply) => {
        const { batch } = run(rs, {});
        const cos = Float32Array.from(rs.map((r) => r.cos));
        const only = shapedRewards(batch, cos, GarConfigSchema.parse({ beta: 0.3, bonus: 'linear', apply }));
        rs.forEach((r, i) => {
          if ((apply === 'correct') !== r.reward > 0) expect(only.rewards[i]).toBe(r.reward);
        });
        const pos = shapedRewards(batch, cos, GarConfigSchema.parse({ beta: 0.3, bonus: 'linear', apply: 'all', positiveOnly: true }));
        rs.forEach((r, i) => expect(pos.rewards[i]!).toBeGreaterThanOrEqual(r.reward));
      }),
    );
  });

  it('the default hinge: wrong rollouts keep their reward, no bonus is negative, and in a group of 2 or more correct the least aligned gets none', () => {
    fc.assert(
      fc.property(rollouts, (rs) => {
        const { batch } = run(rs, {});
        const cos = Float32Array.from(rs.map((r) => r.cos));
        const { rewards } = shapedRewards(batch, cos, GarConfigSchema.parse({}));
        rs.forEach((r, i) => {
          if (r.reward <= 0) expect(rewards[i]).toBe(r.reward);
          expect(rewards[i]!).toBeGreaterThanOrEqual(r.reward);
        });
        for (const g of new Set(rs.map((r) => r.group))) {
          const ok = rs.flatMap((r, i) => (r.group === g && r.reward > 0 ? [i] : []));
          if (ok.length < 2) continue;
          const least = ok.reduce((a, i) => (cos[i]! < cos[a]! ? i : a));
          expect(rewards[least]).toBe(rs[least]!.reward);
        }
      }),
    );
  });

  it('cosines of random sequences lie in [-1, 1] (head-weight and grad-x-hidden); a sequence equal to the reference has cos 1', async () => {
    const seqs = fc.record({
      V: fc.integer({ min: 2, max: 9 }),
      D: fc.integer({ min: 1, max: 5 }),
      lengths: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
    });
    await fc.assert(
      fc.asyncProperty(seqs, async ({ V, D, lengths, seed }) => {
        const rng = new Rng(seed);
        const rnd = () => rng.normal();
        const C = Math.max(...lengths);
        const n = lengths.length;
        const h = Float32Array.from({ length: n * C * D }, rnd);
        const ids = Int32Array.from({ length: n * C }, () => rng.uint32() % V);
        const mask = Float32Array.from({ length: n * C }, (_, k) => (k % C < lengths[Math.floor(k / C)]! ? 1 : 0));
        const logits = Float32Array.from({ length: n * C * V }, () => 3 * rnd());
        const W = Float32Array.from({ length: V * D }, rnd);
        const [cross, self, refSelf, v, vRef] = tf.tidy(() => {
          const a = {
            h: tf.tensor3d(h, [n, C, D]),
            probs: tf.softmax(tf.tensor3d(logits, [n, C, V])) as tf.Tensor3D,
            ids: tf.tensor2d(ids, [n, C], 'int32'),
            mask: tf.tensor2d(mask, [n, C]),
          };
          // the reference: row 0 itself
          const ref = {
            h: tf.slice(a.h, [0, 0, 0], [1, C, D]) as tf.Tensor3D,
            probs: tf.slice(a.probs, [0, 0, 0], [1, C, V]) as tf.Tensor3D,
            ids: tf.slice(a.ids, [0, 0], [1, C]) as tf.Tensor2D,
            mask: tf.slice(a.mask, [0, 0], [1, C]) as tf.Tensor2D,
          };
          const w = tf.tensor2d(W, [V, D]);
          return [crossInner(a, ref), selfInner(a), selfInner(ref), gradTimesHidden(a, w), gradTimesHidden(ref, w)];
        });
        const cos = cosines(await cross.data(), await self.data(), (await refSelf.data())[0]!);
        const vcos = vectorCosines(await v.data(), await vRef.data());
        tf.dispose([cross, self, refSelf, v, vRef]);
        for (const c of [...cos, ...vcos]) expect(Math.abs(c)).toBeLessThanOrEqual(1);
        expect(cos[0]).toBeCloseTo(1, 5);
        if (vcos.some((c) => c !== 0)) expect(vcos[0]).toBeCloseTo(1, 5);
      }),
      { numRuns: 50 },
    );
  });
});

describe('by hand', () => {
  it('the default: the centred hinge on the correct rollouts only, beta 0.5, then Dr. GRPO', () => {
    const { gar } = run(
      [
        { group: 0, reward: 1, cos: 0.5, length: 2 },
        { group: 0, reward: 1, cos: 0.1, length: 1 },
        { group: 0, reward: 0, cos: 0.9, length: 1 },
        { group: 1, reward: 1, cos: 0.25, length: 1 },
        { group: 1, reward: 0, cos: -0.5, length: 1 },
      ],
      {},
    );
    // group 0: mean cos of the correct 0.3 -> bonuses 0.5 * 0.2 and 0; the wrong rollout none, whatever its cos
    const m = (Math.fround(0.5) + Math.fround(0.1)) / 2;
    const r0 = [Math.fround(1 + 0.5 * (Math.fround(0.5) - m)), 1, 0];
    const mean0 = (r0[0]! + r0[1]! + r0[2]!) / 3;
    // group 1: one correct rollout: its absolute cosine (the authors' mean of 0)
    const r1 = [Math.fround(1 + 0.5 * 0.25), 0];
    const mean1 = (r1[0]! + r1[1]!) / 2;
    expect([...gar.advantages]).toEqual(
      [r0[0]! - mean0, r0[0]! - mean0, r0[1]! - mean0, r0[2]! - mean0, r1[0]! - mean1, r1[1]! - mean1].map(Math.fround),
    );
    expect(gar.metrics.gar_dense_mean).toBeCloseTo((0.5 * (0.5 - m) + 0 + 0.5 * 0.25) / 3, 7);
  });
  it('beta cos, then Dr. GRPO (bonus linear, apply all: the earlier default): one group of three', () => {
    const { gar } = run(
      [
        { group: 0, reward: 1, cos: 0.5, length: 2 },
        { group: 0, reward: 0, cos: -0.25, length: 1 },
        { group: 0, reward: 0, cos: 0.25, length: 1 },
      ],
      { beta: 0.2, bonus: 'linear', apply: 'all' },
    );
    const r = [Math.fround(1 + 0.2 * Math.fround(0.5)), Math.fround(0 + 0.2 * -0.25), Math.fround(0.2 * 0.25)];
    const mean = (r[0]! + r[1]! + r[2]!) / 3;
    expect([...gar.advantages]).toEqual([r[0]! - mean, r[0]! - mean, r[1]! - mean, r[2]! - mean].map(Math.fround));
    expect(gar.metrics.gar_dense_mean).toBeCloseTo((0.1 - 0.05 + 0.05) / 3, 7);
  });
  it('without the cosine signal: a typed error naming it', () => {
    const batch = batchFromRows([{ group: 0, reward: 1, prompt: [1], completion: [2] }]);
    expect(() => prepareEstimator('gar').estimate(batch, Signals.forBatch(batch))).toThrow('estimator gar needs signal gar.cosine');
  });
});
