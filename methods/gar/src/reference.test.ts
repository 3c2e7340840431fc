import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '@rlvr/policy';
import { prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { Signals, batchFromRows } from '@rlvr/core';
import {
  GAR_COSINE,
  cosines,
  crossInner,
  garEstimator,
  gradTimesHidden,
  materialize,
  materializedInner,
  selfInner,
  vectorCosines,
  type Sequences,
} from './index.js';
import { tf } from './tf.js';

registerEstimator(garEstimator);
beforeAll(() => selectBackend({ backend: 'cpu' }));

interface CosineCase {
  name: string;
  V: number;
  D: number;
  temperature: number;
  W: number[];
  refIds: number[];
  refH: number[];
  ids: number[][];
  h: number[][];
  cos: number[];
  cosGradXHidden: number[];
  inner0: number;
}
interface AdvantageCase {
  config: { beta: number; apply: 'all' | 'correct' | 'wrong'; bonus: 'hinge' | 'linear'; positiveOnly: boolean; normalize: 'mean' | 'std' };
  group: number[];
  reward: number[];
  cos: number[];
  lengths: number[];
  advantages: number[];
}
/** Written by tools/fixtures/gar/numpy_reference.py: float64 NumPy, the [V, D] gradients materialised. */
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/numpy-reference.json', import.meta.url), 'utf8')) as {
  cosines: CosineCase[];
  advantages: AdvantageCase[];
};

/** Rows padded to the longest: h `[n, C, D]`, probs = softmax(h Wᵀ / tau) computed here in float32. */
function sequencesOf(rows: { ids: number[]; h: number[] }[], W: tf.Tensor2D, D: number, tau: number): Sequences {
  const n = rows.length;
  const C = Math.max(...rows.map((r) => r.ids.length));
  const h = new Float32Array(n * C * D);
  const ids = new Int32Array(n * C);
  const mask = new Float32Array(n * C);
  rows.forEach((r, k) => {
    h.set(r.h, k * C * D);
    ids.set(r.ids, k * C);
    mask.fill(1, k * C, k * C + r.ids.length);
  });
  return tf.tidy(() => {
    const ht = tf.tensor3d(h, [n, C, D]);
    const logits = tf.reshape(tf.matMul(tf.reshape(ht, [n * C, D]), W, false, true), [n, C, W.shape[0]]);
    return {
      h: ht,
      probs: tf.softmax(tf.div(logits, tau)) as tf.Tensor3D,
      ids: tf.tensor2d(ids, [n, C], 'int32'),
      mask: tf.tensor2d(mask, [n, C]),
    };
  });
}

// Tolerance: the inputs are the same float32 numbers on both sides; NumPy works in float64 from the
// materialised gradients, this side in float32 with the factorised sums. Cosines agree to 1e-6
// absolute (they lie in [-1, 1]); the raw inner product, a sum of T S D products, to 1e-5 relative.
describe.each(fixture.cosines.map((c) => [c.name, c] as const))('NumPy reference, cosines: %s', (_name, c) => {
  it('factorised and materialised cosines within 1e-6; the inner product itself within 1e-5 relative', async () => {
    const before = tf.memory().numTensors;
    const W = tf.tensor2d(c.W, [c.V, c.D]);
    const rows = sequencesOf(
      c.ids.map((ids, k) => ({ ids, h: c.h[k]! })),
      W,
      c.D,
      c.temperature,
    );
    const ref = sequencesOf([{ ids: c.refIds, h: c.refH }], W, c.D, c.temperature);
    const cross = crossInner(rows, ref);
    const self = selfInner(rows);
    const refSelf = selfInner(ref);
    const cos = cosines(await cross.data(), await self.data(), (await refSelf.data())[0]!);
    const gRef = materialize(ref);
    const m = materializedInner(rows, gRef);
    const gRefSelf = tf.tidy(() => tf.sum(tf.square(gRef)));
    const cosM = cosines(await m.cross.data(), await m.self.data(), (await gRefSelf.data())[0]!);
    c.cos.forEach((want, k) => {
      expect(Math.abs(cos[k]! - want), `rollout ${k}`).toBeLessThan(1e-6);
      expect(Math.abs(cosM[k]! - want), `rollout ${k}, materialised`).toBeLessThan(1e-6);
    });
    const inner0 = (await cross.data())[0]! / c.temperature ** 2;
    expect(Math.abs(inner0 - c.inner0) / Math.abs(c.inner0)).toBeLessThan(1e-5);
    tf.dispose([W, cross, self, refSelf, gRef, gRefSelf, m.cross, m.self, ...Object.values(rows), ...Object.values(ref)]);
    expect(tf.memory().numTensors).toBe(before); // the kernels leave nothing behind
  });

  it("the authors' vector (grad-x-hidden) equals diag(Wᵀ G) of the materialised gradient: cosines within 1e-6", async () => {
    const before = tf.memory().numTensors;
    const W = tf.tensor2d(c.W, [c.V, c.D]);
    const rows = sequencesOf(
      c.ids.map((ids, k) => ({ ids, h: c.h[k]! })),
      W,
      c.D,
      c.temperature,
    );
    const ref = sequencesOf([{ ids: c.refIds, h: c.refH }], W, c.D, c.temperature);
    const v = gradTimesHidden(rows, W);
    const vRef = gradTimesHidden(ref, W);
    const cos = vectorCosines(await v.data(), await vRef.data());
    c.cosGradXHidden.forEach((want, k) => expect(Math.abs(cos[k]! - want), `rollout ${k}`).toBeLessThan(1e-6));
    tf.dispose([W, v, vRef, ...Object.values(rows), ...Object.values(ref)]);
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe.each(fixture.advantages.map((c) => [JSON.stringify(c.config), c] as const))('NumPy reference, advantages: %s', (_name, c) => {
  it('within 1e-6', () => {
    const batch = batchFromRows(
      c.group.map((g, i) => ({ group: g, reward: c.reward[i]!, prompt: [1], completion: Array.from({ length: c.lengths[i]! }, () => 3) })),
    );
    const signals = Signals.forBatch(batch).setPerRollout(GAR_COSINE, Float32Array.from(c.cos));
    const r = prepareEstimator('gar', c.config).estimate(batch, signals);
    expect(r.advantages.length).toBe(c.advantages.length);
    c.advantages.forEach((e, t) => expect(Math.abs(r.advantages[t]! - e), `token ${t}`).toBeLessThan(1e-6));
  });
});
