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

type GradFn = (...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => {
  value: tf.Tensor;
  gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor[];
};

/**
 * `tf.customGrad` whose gradient function frees its temporaries when it returns. tfjs runs every
 * custom gradient of a backward pass in the scope of the whole pass, so without this each one's
 * intermediates (attention's `[M, S]` products, RMSNorm's and SwiGLU's elementwise terms) would
 * stay alive until the pass ends.
 */
export function customGradTidy(f: GradFn): (...inputs: tf.Tensor[]) => tf.Tensor {
  const wrapped = (...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const r = f(...args);
    return { value: r.value, gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.tidy(() => r.gradFunc(dy, saved)) };
  };
  return tf.customGrad(wrapped as never) as unknown as (...inputs: tf.Tensor[]) => tf.Tensor;
}

/** Swap the last two axes (rank 2 to 4). */
export function swapLast(x: tf.Tensor): tf.Tensor {
  const r = x.rank;
  const perm = Array.from({ length: r }, (_, i) => i);
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return tf.transpose(x, perm);
}

const transposeCache = new WeakMap<tf.Tensor, { dataId: object; t: tf.Tensor }>();
/** Bytes held by cached transposes now, and the most they may hold (see `setTransposeCacheLimit`). */
let cachedBytes = 0;
/** Default of `setTransposeCacheLimit`: 256 MiB. */
export const DEFAULT_TRANSPOSE_CACHE_BYTES = 256 * 2 ** 20;
let cacheLimit = DEFAULT_TRANSPOSE_CACHE_BYTES;

/**
 * The most bytes of weight transposes kept in memory, process-wide (default 256 MiB). A weight whose
 * transpose would go over it is multiplied as `(W @ x^T)^T` instead (same speed on wasm within
 * 1.6x, no copy of W): a model larger than the budget, such as Qwen3-0.6B (2.4 GB of float32
 * weights), then needs no second copy of its weights, which wasm's 4 GiB heap would not hold.
 * Applies to transposes made after the call.
 */
export function setTransposeCacheLimit(bytes: number): void {
  if (!(bytes >= 0)) throw new RangeError(`transpose cache limit must be >= 0 bytes, got ${bytes}`);
  cacheLimit = bytes;
}

/** Bytes held by cached weight transposes now (for tests and memory reports). */
export function transposeCacheBytes(): number {
  return cachedBytes;
}

function dropCached(t: tf.Tensor): void {
  if (t.isDisposed) return;
  cachedBytes -= t.size * 4;
  t.dispose();
}

/**
 * W^T of a weight variable, cached per data buffer: tfjs gives a variable a new `dataId` on every
 * `assign`, so an optimizer update invalidates the cache by itself. Only used as a value (the
 * gradient w.r.t. W is computed from W itself), so caching is safe under autodiff. `undefined`
 * when W is a variable whose transpose the cache has no room for (see `setTransposeCacheLimit`).
 */
function cachedTranspose(W: tf.Tensor): tf.Tensor | undefined {
  if (!(W instanceof tf.Variable)) return undefined; // plain tensors (e.g. saved for a gradient): no copy
  const hit = transposeCache.get(W);
  if (hit && hit.dataId === W.dataId && !hit.t.isDisposed) return hit.t;
  if (hit) dropCached(hit.t);
  transposeCache.delete(W);
  if (cachedBytes + W.size * 4 > cacheLimit) return undefined;
  const t = tf.keep(tf.transpose(W));
  cachedBytes += t.size * 4;
  transposeCache.set(W, { dataId: W.dataId, t });
  return t;
}

/** Free the cached transpose of a weight (call when disposing the weight). */
export function releaseTranspose(W: tf.Tensor): void {
  const hit = transposeCache.get(W);
  if (hit) dropCached(hit.t);
  transposeCache.delete(W);
}

/**
 * x `[N, in]` @ W^T for W `[out, in]` -> `[N, out]`, as a plain product: with W's cached transpose,
 * or, when W is not a variable or the cache is full, as `(W @ x^T)^T` (transposes of x and of the
 * result only, never a copy of W).
 * Forward values only: callers give it their own gradient.
 */
export function matMulWT(x: tf.Tensor2D, W: tf.Tensor2D): tf.Tensor2D {
  const wt = cachedTranspose(W);
  if (wt) return tf.matMul(x, wt as tf.Tensor2D);
  return tf.tidy(() => tf.transpose(tf.matMul(W, tf.transpose(x))) as tf.Tensor2D);
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
        value: matMulWT(xx as tf.Tensor2D, W),
        gradFunc: (dy, [sw]) => [tf.matMul(dy as tf.Tensor2D, sw as tf.Tensor2D)],
      };
    };
    return customGradTidy(g)(x) as tf.Tensor2D;
  }
  const f: GradFn = (xx, ww, save) => {
    (save as tf.GradSaveFunc)([xx as tf.Tensor, ww as tf.Tensor]);
    return {
      value: matMulWT(xx as tf.Tensor2D, ww as tf.Tensor2D),
      gradFunc: (dy, [sx, sw]) => [
        tf.matMul(dy as tf.Tensor2D, sw as tf.Tensor2D),
        tf.matMul(swapLast(dy) as tf.Tensor2D, sx as tf.Tensor2D),
      ],
    };
  };
  return customGradTidy(f)(x, W) as tf.Tensor2D;
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
  return customGradTidy(f)(a, b) as T;
}

/**
 * x `[n, ...rest]` -> n tensors `[...rest]`, the values of `tf.unstack(x)`. No autodiff of its own:
 * for use inside custom gradients. Why: tfjs-backend-wasm's Slice (and so Unpack and Split) copies
 * the whole of x out of the wasm heap for every piece, n x |x| bytes per split; Gather copies only
 * the piece (measured 475 -> 30 ms for [256, 80, 32]). On other backends it is `tf.unstack`.
 */
export function unstackRows(x: tf.Tensor): tf.Tensor[] {
  if (tf.getBackend() !== 'wasm') return tf.unstack(x);
  return tf.tidy(() => Array.from({ length: x.shape[0] }, (_, i) => tf.gather(x, i)));
}

/**
 * Batched plain product a `[..., M, K]` @ b `[..., K, N]` (no autodiff of its own: for use inside
 * custom gradients). On wasm the batched kernel runs at ~1.3 GFLOP/s, while a 2-D product with a
 * wide output runs at 6-18 GFLOP/s (XNNPACK); splitting the batch (`unstackRows`) costs a copy of
 * each operand. So only products with a short inner axis K (cheap to split: q k^T and dY V^T, K =
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
  const as = unstackRows(tf.reshape(a, [nb, M, K]));
  const bs = unstackRows(tf.reshape(b, [nb, K, N]));
  return tf.reshape(tf.stack(as.map((x, i) => tf.matMul(x as tf.Tensor2D, bs[i] as tf.Tensor2D))), [...lead, M, N]);
}
