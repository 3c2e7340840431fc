import * as tf from '@tensorflow/tfjs-core';
// tfjs-core's gradient functions, bundled at build time (scripts/tf-gradients.mjs says why): the Node build
// of tfjs-core registers none. Every differentiable module of this package imports this one.
import '../vendor/tf-gradients.js';

/**
 * Matrix products that never ask the backend for a transposed operand.
 *
 * Why: tfjs-backend-wasm runs `matMul(a, b, transposeA, transposeB)` with a transposed operand
 * about 10x slower than a plain product (measured 0.5-0.7 vs 6-17 GFLOP/s on this machine), and
 * tfjs's own matMul gradient uses exactly those transposed forms. So we transpose explicitly (a
 * cheap copy) and give these products custom gradients made of plain products.
 */

type GradFn = (...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => { value: tf.Tensor; gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor[] };

/** Swap the last two axes (rank 2 to 4). */
export function swapLast(x: tf.Tensor): tf.Tensor {
  const r = x.rank;
  const perm = Array.from({ length: r }, (_, i) => i);
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return tf.transpose(x, perm);
}

const transposeCache = new WeakMap<tf.Tensor, { dataId: object; t: tf.Tensor }>();

/**
 * W^T of a weight variable, cached per data buffer: tfjs gives a variable a new `dataId` on every
 * `assign`, so an optimizer update invalidates the cache by itself. Only used as a value (the
 * gradient w.r.t. W is computed from W itself), so caching is safe under autodiff.
 */
export function cachedTranspose(W: tf.Tensor): tf.Tensor {
  if (!(W instanceof tf.Variable)) return tf.transpose(W); // plain tensors: a transient transpose
  const hit = transposeCache.get(W);
  if (hit && hit.dataId === W.dataId && !hit.t.isDisposed) return hit.t;
  if (hit && !hit.t.isDisposed) hit.t.dispose();
  const t = tf.keep(tf.transpose(W));
  transposeCache.set(W, { dataId: W.dataId, t });
  return t;
}

/** Free the cached transpose of a weight (call when disposing the weight). */
export function releaseTranspose(W: tf.Tensor): void {
  const hit = transposeCache.get(W);
  if (hit && !hit.t.isDisposed) hit.t.dispose();
  transposeCache.delete(W);
}

/**
 * x `[N, in]` @ W^T for a weight `W` `[out, in]` (Hugging Face layout) -> `[N, out]`.
 * Gradients: dx = dy @ W ; dW = dy^T @ x, both plain products.
 *
 * `weightGrad: false` (input-only, e.g. saliency): W is a constant of the custom gradient, so only
 * dx is computed (no `[out, in]` product, no transpose of dy) and x is not kept for the backward.
 */
export function linear2d(x: tf.Tensor2D, W: tf.Tensor2D, weightGrad = true): tf.Tensor2D {
  if (!weightGrad) {
    const g: GradFn = (xx, save) => {
      // W is saved (kept alive by the engine), never only closed over: a caller's tidy may dispose
      // a plain-tensor W before the gradient is taken.
      (save as tf.GradSaveFunc)([W]);
      return {
        value: tf.matMul(xx as tf.Tensor2D, cachedTranspose(W) as tf.Tensor2D),
        gradFunc: (dy, [sw]) => [tf.matMul(dy as tf.Tensor2D, sw as tf.Tensor2D)],
      };
    };
    return tf.customGrad(g as never)(x) as tf.Tensor2D;
  }
  const f: GradFn = (xx, ww, save) => {
    (save as tf.GradSaveFunc)([xx as tf.Tensor, ww as tf.Tensor]);
    return {
      value: tf.matMul(xx as tf.Tensor2D, cachedTranspose(ww as tf.Tensor) as tf.Tensor2D),
      gradFunc: (dy, [sx, sw]) => [tf.matMul(dy as tf.Tensor2D, sw as tf.Tensor2D), tf.matMul(swapLast(dy) as tf.Tensor2D, sx as tf.Tensor2D)],
    };
  };
  return tf.customGrad(f as never)(x, W) as tf.Tensor2D;
}

/**
 * Batched a `[..., M, K]` @ b `[..., K, N]` -> `[..., M, N]` (same leading axes, no broadcasting).
 * Gradients: da = dc @ b^T ; db = a^T @ dc, with explicit transposes.
 */
export function matmul<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  const f: GradFn = (aa, bb, save) => {
    (save as tf.GradSaveFunc)([aa as tf.Tensor, bb as tf.Tensor]);
    return {
      value: tf.matMul(aa as tf.Tensor, bb as tf.Tensor),
      gradFunc: (dc, [sa, sb]) => [tf.matMul(dc, swapLast(sb)), tf.matMul(swapLast(sa), dc)],
    };
  };
  return tf.customGrad(f as never)(a, b) as T;
}

/**
 * Batched plain product a `[..., M, K]` @ b `[..., K, N]` (no autodiff of its own: for use inside
 * custom gradients). On wasm the batched kernel runs at ~1.3 GFLOP/s, while a 2-D product with a
 * wide output runs at 6-18 GFLOP/s (XNNPACK); but splitting a batch (Unpack) costs ~100 ms of CPU
 * per 8 MB. So only products with a short inner axis K (cheap to split: q k^T and dY V^T, K =
 * head size) and a wide N are unrolled over the batch (measured 132 -> 25 ms for
 * 16 x [512,32]x[32,256]); the rest use the batched kernel (the transposed trick (b^T a^T)^T
 * measured 66 -> 109 ms of CPU for 16 x [512,256]x[256,32], so it is not used).
 */
export function bmm(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const N = b.shape[b.rank - 1];
  const M = a.shape[a.rank - 2];
  const lead = a.shape.slice(0, -2);
  const nb = lead.reduce((x, y) => x * y, 1);
  if (a.rank < 3 || nb === 1 || tf.getBackend() !== 'wasm') return tf.matMul(a, b);
  const K = a.shape[a.rank - 1];
  if (N < 64 || K > 64 || M < 16) return tf.matMul(a, b);
  const as = tf.unstack(tf.reshape(a, [nb, M, K]));
  const bs = tf.unstack(tf.reshape(b, [nb, K, N]));
  return tf.reshape(tf.stack(as.map((x, i) => tf.matMul(x as tf.Tensor2D, bs[i] as tf.Tensor2D))), [...lead, M, N]);
}
