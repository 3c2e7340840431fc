import * as tf from '@tensorflow/tfjs-core';
import { bmm, customGradTidy, swapLast, unstackRows } from './ops.js';

/**
 * Fused blocks with hand-written gradients. Why: the tape of plain tfjs ops keeps every
 * intermediate (a batch of 16 x 256 tokens overflowed the wasm heap) and each op costs a kernel
 * launch. Each function here saves only what its backward needs and runs plain matrix products.
 * The unfused twins are the plain-op formulas in the comments; the PyTorch fixture tests check
 * values and gradients through all of them.
 */

type GradFn = (...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => {
  value: tf.Tensor;
  gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor[];
};

/**
 * RMSNorm over the last axis: y = x * r * w, r = rsqrt(mean(x^2) + eps). x `[..., D]`, w `[D]`.
 * Backward: g = dy * w ; dx = r * (g - x * r^2 * mean(g * x)) ; dw = sum(dy * x * r) over leading axes.
 * `weightGrad: false`: w is a constant of the custom gradient and dw is never computed.
 */
export function rmsNorm<T extends tf.Tensor>(x: T, w: tf.Tensor, eps: number, weightGrad = true): T {
  const dxOf = (dy: tf.Tensor, sx: tf.Tensor, sw: tf.Tensor, sr: tf.Tensor) => {
    const g = tf.mul(dy, sw);
    const m = tf.mean(tf.mul(g, sx), -1, true);
    return tf.mul(sr, tf.sub(g, tf.mul(sx, tf.mul(tf.square(sr), m))));
  };
  const norm = (X: tf.Tensor) => tf.rsqrt(tf.add(tf.mean(tf.square(X), -1, true), eps));
  if (!weightGrad) {
    const g: GradFn = (xx, save) => {
      const X = xx as tf.Tensor;
      const r = norm(X);
      (save as tf.GradSaveFunc)([X, w, r]);
      return { value: tf.mul(tf.mul(X, r), w), gradFunc: (dy, [sx, sw, sr]) => [dxOf(dy, sx, sw, sr)] };
    };
    return customGradTidy(g as never)(x) as T;
  }
  const f: GradFn = (xx, ww, save) => {
    const X = xx as tf.Tensor;
    const r = norm(X);
    (save as tf.GradSaveFunc)([X, ww as tf.Tensor, r]);
    return {
      value: tf.mul(tf.mul(X, r), ww as tf.Tensor),
      gradFunc: (dy, [sx, sw, sr]) => {
        const D = sx.shape[sx.rank - 1];
        const dw = tf.sum(tf.reshape(tf.mul(dy, tf.mul(sx, sr)), [-1, D]), 0);
        return [dxOf(dy, sx, sw, sr), dw];
      },
    };
  };
  return customGradTidy(f as never)(x, w) as T;
}

/**
 * SwiGLU: silu(gate) * up, silu(z) = z * sigmoid(z). gate, up `[..., I]`.
 * Backward: d_up = dy * silu(gate) ; d_gate = dy * up * s * (1 + gate * (1 - s)), s = sigmoid(gate).
 */
export function swiglu<T extends tf.Tensor>(gate: T, up: T): T {
  const f: GradFn = (g, u, save) => {
    (save as tf.GradSaveFunc)([g as tf.Tensor, u as tf.Tensor]);
    const s = tf.sigmoid(g as tf.Tensor);
    return {
      value: tf.mul(tf.mul(g as tf.Tensor, s), u as tf.Tensor),
      gradFunc: (dy, [sg, su]) => {
        const sig = tf.sigmoid(sg);
        const dUp = tf.mul(dy, tf.mul(sg, sig));
        const dGate = tf.mul(tf.mul(dy, su), tf.mul(sig, tf.add(1, tf.mul(sg, tf.sub(1, sig)))));
        return [dGate, dUp];
      },
    };
  };
  return customGradTidy(f as never)(gate, up) as T;
}

/**
 * Attention core: y = softmax(q k^T + bias) v, per (batch, KV head) group.
 * q `[B, KV, M, hd]` (already scaled by 1/sqrt(hd)), k, v `[B, KV, S, hd]`, bias `[B, 1, M, S]`
 * (a constant: no gradient) -> y `[B, KV, M, hd]`. Saves q, k, v and the probabilities P only.
 * Backward: dV = P^T dY ; dP = dY V^T ; dS = P * (dP - sum(dP * P)) ; dQ = dS K ; dK = dS^T Q.
 */
export function attention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor, rows: number = q.shape[2]): tf.Tensor4D {
  // Per-group 2-D products pay off for long query blocks (training, prefill), not for decode steps.
  // `rows`: the query rows per group of the whole pass this call is a part of (a prefix and the
  // columns after it run as two calls): both parts then take the kernel the single pass takes,
  // and give its values bit for bit.
  if (tf.getBackend() === 'wasm' && q.shape[0] * q.shape[1] > 1 && rows >= 64) return attentionPerGroup(q, k, v, bias);
  const f: GradFn = (qq, kk, vv, save) => {
    const P = tf.softmax(tf.add(bmm(qq as tf.Tensor, swapLast(kk as tf.Tensor)), bias), -1);
    (save as tf.GradSaveFunc)([qq as tf.Tensor, kk as tf.Tensor, vv as tf.Tensor, P]);
    return {
      value: bmm(P, vv as tf.Tensor),
      gradFunc: (dY, [sq, sk, sv, sp]) => {
        const dV = bmm(swapLast(sp), dY);
        const dP = bmm(dY, swapLast(sv));
        const dS = tf.mul(sp, tf.sub(dP, tf.sum(tf.mul(dP, sp), -1, true)));
        const dQ = bmm(dS, sk);
        const dK = bmm(swapLast(dS), sq);
        return [dQ, dK, dV];
      },
    };
  };
  return customGradTidy(f as never)(q, k, v) as tf.Tensor4D;
}

/**
 * The same attention as `attention`, one (batch, KV head) group at a time with 2-D products.
 * Why: on wasm the batched product runs at ~1.5 GFLOP/s and 2-D ones at 6-18 (XNNPACK); the four
 * narrow products (output width = head size) were a quarter of a training step. Splitting q, k, v
 * and dY (small: head-size wide) is cheap; the large P stays split from the start.
 */
function attentionPerGroup(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor): tf.Tensor4D {
  const [B, KV, M, hd] = q.shape;
  const S = k.shape[2];
  const n = B * KV;
  // Outside the custom gradient (whose forward disposes its intermediates): the caller's scope
  // keeps the split bias for the next layers, which share it.
  const bs = biasRows(bias, B, M, S);
  const f: GradFn = (qq, kk, vv, save) => {
    const qs = unstackRows(tf.reshape(qq as tf.Tensor, [n, M, hd]));
    const ks = unstackRows(tf.reshape(kk as tf.Tensor, [n, S, hd]));
    const vs = unstackRows(tf.reshape(vv as tf.Tensor, [n, S, hd]));
    const Ps = qs.map((qi, i) =>
      tf.softmax(tf.add(tf.matMul(qi as tf.Tensor2D, tf.transpose(ks[i]) as tf.Tensor2D), bs[Math.floor(i / KV)]), -1),
    );
    const ys = Ps.map((P, i) => tf.matMul(P as tf.Tensor2D, vs[i] as tf.Tensor2D));
    (save as tf.GradSaveFunc)([...qs, ...ks, ...vs, ...Ps]);
    return {
      value: tf.reshape(tf.stack(ys), [B, KV, M, hd]),
      gradFunc: (dY, saved) => {
        const sq = saved.slice(0, n);
        const sk = saved.slice(n, 2 * n);
        const sv = saved.slice(2 * n, 3 * n);
        const sp = saved.slice(3 * n, 4 * n);
        const dYs = unstackRows(tf.reshape(dY, [n, M, hd]));
        const dQ: tf.Tensor[] = [];
        const dKT: tf.Tensor[] = [];
        const dVT: tf.Tensor[] = [];
        // Only head-size-wide operands are transposed ([M, hd], [S, hd]: small), so that dV and dK
        // come out transposed, [hd, S] = dY^T P and Q^T dS: the [M, S] matrices P and dS never are.
        // (Transposing dY or Q once per call and splitting it costs more: a split per tensor.)
        for (let i = 0; i < n; i++) {
          const P = sp[i] as tf.Tensor2D;
          dVT.push(tf.matMul(tf.transpose(dYs[i]) as tf.Tensor2D, P)); // [hd, S]
          const dP = tf.matMul(dYs[i] as tf.Tensor2D, tf.transpose(sv[i]) as tf.Tensor2D); // [M, S]
          const dS = tf.mul(P, tf.sub(dP, tf.sum(tf.mul(dP, P), -1, true)));
          dQ.push(tf.matMul(dS, sk[i] as tf.Tensor2D)); // [M, hd]
          dKT.push(tf.matMul(tf.transpose(sq[i]) as tf.Tensor2D, dS)); // [hd, S]
        }
        const back = (ts: tf.Tensor[]) => tf.reshape(tf.transpose(tf.stack(ts), [0, 2, 1]), [B, KV, S, hd]);
        return [tf.reshape(tf.stack(dQ), [B, KV, M, hd]), back(dKT), back(dVT)];
      },
    };
  };
  return customGradTidy(f as never)(q, k, v) as tf.Tensor4D;
}

const biasRowsCache = new WeakMap<tf.Tensor, tf.Tensor[]>();

/**
 * The attention bias `[B, 1, M, S]` split into its B rows `[M, S]`, once per bias tensor: every
 * layer of a forward pass uses the same bias, and a split of it costs as much as a
 * product on wasm. The rows belong to the scope that first split them; once that scope has
 * disposed them they are split again.
 */
function biasRows(bias: tf.Tensor, B: number, M: number, S: number): tf.Tensor[] {
  const hit = biasRowsCache.get(bias);
  if (hit?.every((t) => !t.isDisposed)) return hit;
  const rows = unstackRows(tf.reshape(bias, [B, M, S]));
  biasRowsCache.set(bias, rows);
  return rows;
}

/**
 * Rotary embedding: x * cos + rotate_half(x) * sin, with rotate_half(x) = x @ rot.
 * x `[B, T, nh, hd]`, cos/sin `[B, T, 1, hd]` (constants), rot `[hd, hd]`. Since rot^T = -rot,
 * the backward is dx = dy * cos - rotate_half(dy * sin); nothing but cos and sin is saved.
 */
export function rope<T extends tf.Tensor>(x: T, cos: tf.Tensor, sin: tf.Tensor, rot: tf.Tensor2D): T {
  const hd = rot.shape[0];
  const rotate = (t: tf.Tensor) => tf.reshape(tf.matMul(tf.reshape(t, [-1, hd]) as tf.Tensor2D, rot), t.shape);
  const f: GradFn = (xx, save) => {
    (save as tf.GradSaveFunc)([cos, sin]);
    const X = xx as tf.Tensor;
    return {
      value: tf.add(tf.mul(X, cos), tf.mul(rotate(X), sin)),
      gradFunc: (dy, [c, s]) => [tf.sub(tf.mul(dy, c), rotate(tf.mul(dy, s)))],
    };
  };
  return customGradTidy(f as never)(x) as T;
}
