import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { attention, rmsNorm, rope, swiglu } from './fused.js';
import { bmm, linear2d, matmul, unstackRows } from './ops.js';
import { TEST_BACKENDS, relError, useBackend } from './test-utils/fixtures.js';

/** Values and gradients of `fast` and `slow` (plain tfjs ops, tfjs autodiff) for the same inputs. */
function compare(fast: (...x: tf.Tensor[]) => tf.Tensor, slow: (...x: tf.Tensor[]) => tf.Tensor, inputs: tf.Tensor[], tol = 1e-5) {
  const w = tf.randomNormal(fast(...inputs).shape, 0, 1, 'float32', 9);
  const loss =
    (f: typeof fast) =>
    (...x: tf.Tensor[]) =>
      tf.sum(tf.mul(f(...x), w)) as tf.Scalar;
  const a = tf.grads(loss(fast))(inputs);
  const b = tf.grads(loss(slow))(inputs);
  expect(relError(fast(...inputs).dataSync(), slow(...inputs).dataSync())).toBeLessThan(tol);
  a.forEach((g, i) => expect(relError(g.dataSync(), b[i].dataSync()), `input ${i}`).toBeLessThan(tol));
  tf.dispose([w, ...a, ...b]);
}

describe.each(TEST_BACKENDS)('fused ops equal their plain-op twins on %s (values and gradients)', (backend) => {
  it("unstackRows gives tf.unstack's pieces bit for bit and keeps no temporaries", async () => {
    await useBackend(backend);
    const x = tf.randomNormal([5, 7, 3], 0, 1, 'float32', 11);
    const before = tf.memory().numTensors;
    const rows = unstackRows(x);
    expect(tf.memory().numTensors - before).toBe(5);
    const ref = tf.unstack(x);
    rows.forEach((r, i) => {
      expect(r.shape).toEqual([7, 3]);
      expect(Array.from(r.dataSync())).toEqual(Array.from(ref[i].dataSync()));
    });
    tf.dispose([x, ...rows, ...ref]);
  });

  it('attention, short and long query blocks (the per-group wasm path needs M >= 64), with a mask', async () => {
    await useBackend(backend);
    for (const [B, KV, M, S, hd] of [
      [2, 2, 6, 6, 8],
      [2, 2, 80, 40, 8],
    ]) {
      const q = tf.randomNormal([B, KV, M, hd], 0, 1, 'float32', 1);
      const k = tf.randomNormal([B, KV, S, hd], 0, 1, 'float32', 2);
      const v = tf.randomNormal([B, KV, S, hd], 0, 1, 'float32', 3);
      const bias = tf.where(
        tf.greater(tf.randomUniform([B, 1, M, S], 0, 1, 'float32', 4), 0.3),
        tf.zeros([B, 1, M, S]),
        tf.fill([B, 1, M, S], -1e9),
      );
      const slow = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => tf.matMul(tf.softmax(tf.add(tf.matMul(a, b, false, true), bias), -1), c);
      compare((a, b, c) => attention(a as tf.Tensor4D, b as tf.Tensor4D, c as tf.Tensor4D, bias), slow, [q, k, v]);
      tf.dispose([q, k, v, bias]);
    }
  });

  it('RMSNorm, SwiGLU, rotary, linear, matmul and bmm', async () => {
    await useBackend(backend);
    const x = tf.randomNormal([3, 5, 16], 0, 2, 'float32', 5);
    const w = tf.randomNormal([16], 1, 0.1, 'float32', 6);
    compare(
      (a, b) => rmsNorm(a, b, 1e-6),
      (a, b) => tf.mul(tf.mul(a, tf.rsqrt(tf.add(tf.mean(tf.square(a), -1, true), 1e-6))), b),
      [x, w],
    );
    const u = tf.randomNormal([3, 5, 16], 0, 2, 'float32', 7);
    compare(
      (a, b) => swiglu(a, b),
      (a, b) => tf.mul(tf.mul(a, tf.sigmoid(a)), b),
      [x, u],
    );
    // rotary: rotate_half as concat(-x2, x1), the Hugging Face definition, in the slow twin
    const R = new Float32Array(16 * 16);
    for (let j = 0; j < 8; j++) R[(j + 8) * 16 + j] = -1;
    for (let j = 8; j < 16; j++) R[(j - 8) * 16 + j] = 1;
    const rot = tf.tensor2d(R, [16, 16]);
    const xr = tf.randomNormal([2, 3, 4, 16], 0, 1, 'float32', 12);
    const ang = tf.randomUniform([2, 3, 1, 16], 0, 6, 'float32', 13);
    const [c, sn] = [tf.cos(ang), tf.sin(ang)];
    const half = (t: tf.Tensor) =>
      tf.concat([tf.neg(tf.slice(t, [0, 0, 0, 8], [-1, -1, -1, 8])), tf.slice(t, [0, 0, 0, 0], [-1, -1, -1, 8])], 3);
    compare(
      (a) => rope(a, c, sn, rot),
      (a) => tf.add(tf.mul(a, c), tf.mul(half(a), sn)),
      [xr],
    );
    tf.dispose([rot, xr, ang, c, sn]);
    const x2 = tf.randomNormal([7, 16], 0, 1, 'float32', 8);
    const W = tf.randomNormal([12, 16], 0, 1, 'float32', 9);
    compare(
      (a, b) => linear2d(a as tf.Tensor2D, b as tf.Tensor2D),
      (a, b) => tf.matMul(a, b, false, true),
      [x2, W],
    );
    const a4 = tf.randomNormal([2, 3, 70, 8], 0, 1, 'float32', 10);
    const b4 = tf.randomNormal([2, 3, 8, 66], 0, 1, 'float32', 11);
    compare(
      (a, b) => matmul(a, b),
      (a, b) => tf.matMul(a, b),
      [a4, b4],
    );
    expect(relError(bmm(a4, b4).dataSync(), tf.matMul(a4, b4).dataSync())).toBeLessThan(1e-6);
    tf.dispose([x, w, u, x2, W, a4, b4]);
  });
});
