import { tf } from './tf.js';

/**
 * What GAR needs of sequences under one prompt: the final hidden states that enter the output
 * projection and the next-token distributions they give. Row r's token t is `ids[r, t]`, predicted
 * from `h[r, t]` with `probs[r, t] = softmax(W_out h[r, t] / T)`; padding has `mask` 0.
 * Shapes: h `[n, C, D]`, probs `[n, C, V]`, ids `[n, C]` int32, mask `[n, C]`.
 */
export interface Sequences {
  h: tf.Tensor3D;
  probs: tf.Tensor3D;
  ids: tf.Tensor2D;
  mask: tf.Tensor2D;
}

/**
 * The gradient of rollout r's log-likelihood w.r.t. the output projection, up to the factor 1/T:
 * g_r = sum_t e_t h_tᵀ with e_t = onehot(y_t) - p_t. Every inner product of two such gradients is
 * <g, g'> = sum_{t,s} (e_t . e'_s)(h_t . h'_s), and
 * e_t . e'_s = [y_t = y'_s] - p'_s[y_t] - p_t[y'_s] + p_t . p'_s,
 * so no `[V, D]` gradient is formed: the cost is T S V + T S D per pair instead of (T + S) V D.
 */

/** `[n]` <g_r, g_ref> of every row of `a` with the one sequence `ref` (n = 1), factorised. */
export function crossInner(a: Sequences, ref: Sequences): tf.Tensor1D {
  return tf.tidy(() => {
    const [n, C, D] = a.h.shape;
    const V = a.probs.shape[2];
    const S = ref.h.shape[1];
    const h = tf.reshape(tf.mul(a.h, tf.expandDims(a.mask, 2)), [n * C, D]) as tf.Tensor2D;
    const hr = tf.reshape(tf.mul(ref.h, tf.expandDims(ref.mask, 2)), [S, D]) as tf.Tensor2D;
    const p = tf.reshape(a.probs, [n * C, V]) as tf.Tensor2D;
    const pr = tf.reshape(ref.probs, [S, V]) as tf.Tensor2D;
    const y = tf.reshape(a.ids, [n * C]) as tf.Tensor1D;
    const yr = tf.reshape(ref.ids, [S]) as tf.Tensor1D;
    const hh = tf.matMul(h, hr, false, true); // [nC, S] h_t . h'_s
    const pp = tf.matMul(p, pr, false, true); // [nC, S] p_t . p'_s
    const pAtRef = tf.gather(p, yr, 1); // [nC, S] p_t[y'_s]
    const refAtY = tf.transpose(tf.gather(pr, y, 1)); // [nC, S] p'_s[y_t]
    const eq = tf.cast(tf.equal(tf.expandDims(y, 1), tf.expandDims(yr, 0)), 'float32');
    const ee = tf.add(tf.sub(tf.sub(eq, refAtY), pAtRef), pp);
    return tf.sum(tf.reshape(tf.mul(ee, hh), [n, C * S]), 1) as tf.Tensor1D;
  });
}

/** `[n]` ||g_r||² of every row, factorised (2 T² V + T² D per row). */
export function selfInner(a: Sequences): tf.Tensor1D {
  return tf.tidy(() => {
    const [n, C] = a.ids.shape;
    const h = tf.mul(a.h, tf.expandDims(a.mask, 2));
    const hh = tf.matMul(h, h, false, true); // [n, C, C]
    const pp = tf.matMul(a.probs, a.probs, false, true); // [n, C, C]
    // [n, C, C]: p_t[y_t'], as P onehot(Y)ᵀ (a batched gather reads out of bounds on wasm)
    const pAtY = tf.matMul(a.probs, tf.oneHot(a.ids, a.probs.shape[2]), false, true);
    const eq = tf.cast(tf.equal(tf.expandDims(a.ids, 2), tf.expandDims(a.ids, 1)), 'float32');
    const ee = tf.add(tf.sub(tf.sub(eq, pAtY), tf.transpose(pAtY, [0, 2, 1])), pp);
    return tf.sum(tf.reshape(tf.mul(ee, hh), [n, C * C]), 1) as tf.Tensor1D;
  });
}

/** `[n, V, D]` the gradients themselves, sum_t (onehot(y_t) - p_t) h_tᵀ (for checking, and where T S V > (T + S) V D). */
export function materialize(a: Sequences): tf.Tensor3D {
  return tf.tidy(() => {
    const V = a.probs.shape[2];
    const e = tf.mul(tf.sub(tf.oneHot(a.ids, V), a.probs), tf.expandDims(a.mask, 2)); // [n, C, V]
    return tf.matMul(e, a.h, true, false) as tf.Tensor3D; // [n, V, D]
  });
}

/** `[n]` <g_r, g_ref> and ||g_r||², from the materialised gradients (`ref`'s given, `[1, V, D]`). */
export function materializedInner(a: Sequences, gRef: tf.Tensor3D): { cross: tf.Tensor1D; self: tf.Tensor1D } {
  return tf.tidy(() => {
    const g = materialize(a);
    const [n, V, D] = g.shape;
    const flat = tf.reshape(g, [n, V * D]);
    return {
      cross: tf.sum(tf.mul(flat, tf.reshape(gRef, [1, V * D])), 1) as tf.Tensor1D,
      self: tf.sum(tf.square(flat), 1) as tf.Tensor1D,
    };
  });
}

/**
 * `[n, D]` the authors' GAR vector of every row, before its L2 normalisation (LQgdwind/GAR, `gar/online_reward.py`):
 * the gradient-activation product at the input of the output layer, v = sum_t (dCE_t / dh_t) ⊙ h_t with
 * dCE_t / dh_t = Wᵀ (p_t - onehot(y_t)) (up to the positive factors 1/T and 1/L, which the cosine does not see).
 * Component d is sum_v W[v, d] G[v, d] with G = sum_t (p_t - onehot(y_t)) h_tᵀ the head-weight gradient: the
 * diagonal of Wᵀ G, without forming G. Cost: n C V D (one `[nC, V] x [V, D]` product). `W` is `[V, D]`.
 */
export function gradTimesHidden(a: Sequences, W: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const [n, C, D] = a.h.shape;
    const V = a.probs.shape[2];
    const flat = n * C;
    // [nC, D] Wᵀ p_t - W[y_t]: the backprojected prediction error (a gather of W's rows, not an [nC, V] one-hot)
    const back = tf.sub(tf.matMul(tf.reshape(a.probs, [flat, V]), W), tf.gather(W, tf.reshape(a.ids, [flat])));
    const prod = tf.mul(tf.mul(back, tf.reshape(a.h, [flat, D])), tf.reshape(a.mask, [flat, 1]));
    return tf.sum(tf.reshape(prod, [n, C, D]), 1) as tf.Tensor2D;
  });
}

/** cos of each of `rows` (`[n, D]`, row-major) with `ref` (`[D]`), in float64 (0 where either is 0), clamped to [-1, 1]. */
export function vectorCosines(rows: ArrayLike<number>, ref: ArrayLike<number>): Float64Array {
  const D = ref.length;
  const n = D > 0 ? rows.length / D : 0;
  const cross = new Float64Array(n);
  const self = new Float64Array(n);
  let refSelf = 0;
  for (let d = 0; d < D; d++) refSelf += ref[d]! * ref[d]!;
  for (let i = 0; i < n; i++) {
    let c = 0;
    let q = 0;
    for (let d = 0; d < D; d++) {
      const x = rows[i * D + d]!;
      c += x * ref[d]!;
      q += x * x;
    }
    cross[i] = c;
    self[i] = q;
  }
  return cosines(cross, self, refSelf);
}

/** cos = <g, g*> / (||g|| ||g*||) in float64, clamped to [-1, 1] (rounding); 0 where either gradient is 0. */
export function cosines(cross: ArrayLike<number>, self: ArrayLike<number>, refSelf: number): Float64Array {
  const out = new Float64Array(cross.length);
  for (let i = 0; i < cross.length; i++) {
    const d = Math.sqrt(Math.max(0, self[i]!)) * Math.sqrt(Math.max(0, refSelf));
    out[i] = d > 0 ? Math.max(-1, Math.min(1, cross[i]! / d)) : 0;
  }
  return out;
}
