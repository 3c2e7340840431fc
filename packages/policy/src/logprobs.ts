import * as tf from '@tensorflow/tfjs-core';
import { matMulWT, swapLast } from './ops.js';

/** Options of `tokenLogprobs`. */
export interface TokenLogprobsOptions {
  /**
   * Most logits held at once per chunk (elements of a `[B, c, V]` block). The T axis is cut
   * into chunks of `c = max(1, floor(maxChunkElements / (B * V)))` positions. Default 2^23 (32 MB).
   */
  maxChunkElements?: number;
  /** Divide logits by this before the softmax (sampling temperature). Default 1. */
  temperature?: number;
  /**
   * Whether gradients flow into the LM-head weight. Default true (training). Set false when only
   * gradients w.r.t. the hidden states are wanted (saliency): the `[V, D]` weight-gradient matmul
   * is then skipped.
   */
  weightGrad?: boolean;
}

/** Log-probs of the targets and the entropy of the next-token distribution, both `[B, T]`. */
export interface TokenLogprobs {
  logprobs: tf.Tensor2D;
  entropy: tf.Tensor2D;
}

/**
 * log p(targets[b,t] | position t) and the entropy H_t = -sum_v p_v log p_v, from the final hidden
 * states, without ever holding a `[B, T, V]` tensor: logits are built per chunk of positions, and
 * the backward pass recomputes them per chunk (a custom gradient), so the tape holds only `[B, T, D]`.
 *
 * @param hidden  `[B, T, D]` final-normed hidden states
 * @param weight  `[V, D]` LM-head weight (`lm_head.weight`, or the embedding when tied)
 * @param targets `[B, T]` int32 target ids (callers shift: the target at t is the token at t+1)
 *
 * Differentiable w.r.t. `hidden` and (unless `weightGrad: false`) `weight`.
 * Gradients: d log p_y / dz = onehot(y) - p ; dH/dz_i = -p_i (log p_i + H).
 */
export function tokenLogprobs(
  hidden: tf.Tensor3D,
  weight: tf.Tensor2D,
  targets: tf.Tensor2D,
  options: TokenLogprobsOptions = {},
): TokenLogprobs {
  const [B, T, D] = hidden.shape;
  const V = weight.shape[0];
  const tau = options.temperature ?? 1;
  const maxEl = options.maxChunkElements ?? 2 ** 23;
  const c = Math.max(1, Math.min(T, Math.floor(maxEl / (B * V))));
  return tf.tidy(() => {
    const parts: tf.Tensor[] = [];
    for (let s = 0; s < T; s += c) {
      const len = Math.min(c, T - s);
      const h = tf.reshape(len === T ? hidden : tf.slice(hidden, [0, s, 0], [B, len, D]), [B * len, D]) as tf.Tensor2D;
      const tgt = tf.reshape(len === T ? targets : tf.slice(targets, [0, s], [B, len]), [B * len]) as tf.Tensor1D;
      parts.push(tf.reshape(chunk(h, weight, tgt, tau, options.weightGrad ?? true), [B, len, 2]));
    }
    const both = parts.length === 1 ? parts[0] : tf.concat(parts, 1);
    const [lp, ent] = tf.split(both, 2, 2);
    return { logprobs: tf.reshape(lp, [B, T]) as tf.Tensor2D, entropy: tf.reshape(ent, [B, T]) as tf.Tensor2D };
  });
}

type Grad = (...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => {
  value: tf.Tensor;
  gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor | tf.Tensor[];
};

/** One chunk: h `[N, D]`, W `[V, D]`, targets `[N]` -> `[N, 2]` (log-prob, entropy). */
function chunk(h: tf.Tensor2D, W: tf.Tensor2D, targets: tf.Tensor1D, tau: number, weightGrad: boolean): tf.Tensor {
  const N = h.shape[0];
  const V = W.shape[0];
  const stats = (hh: tf.Tensor2D, ww: tf.Tensor2D) => {
    let z: tf.Tensor = matMulWT(hh, ww); // [N, V], plain product (see ops.ts)
    if (tau !== 1) z = tf.div(z, tau);
    const lse = tf.logSumExp(z, 1, true); // [N, 1]
    const logp = tf.sub(z, lse); // [N, V]
    const p = tf.exp(logp);
    const ent = tf.neg(tf.sum(tf.mul(p, logp), 1, true)); // [N, 1]
    return { logp, p, ent };
  };
  const forward = (hh: tf.Tensor2D, ww: tf.Tensor2D, tgt: tf.Tensor1D) => {
    const { logp, ent } = stats(hh, ww);
    const idx = tf.stack([tf.range(0, N, 1, 'int32'), tgt], 1);
    const lp = tf.reshape(tf.gatherND(logp, idx), [N, 1]);
    return tf.concat([lp, ent], 1);
  };
  /**
   * dL/dz `[N, V]` from dy `[N, 2]`: g = onehot(y) dlp - p (dlp + dent (log p + H)). Each `[N, V]`
   * temporary is freed as soon as the next one exists (at most ~5 alive, not ~12: with a large
   * vocabulary these chunk-sized temporaries are the backward pass's peak memory).
   */
  const dLogits = (hh: tf.Tensor2D, ww: tf.Tensor2D, tgt: tf.Tensor1D, dy: tf.Tensor) => {
    const [dlp, dent] = tf.split(dy, 2, 1); // [N, 1] each
    const { logp, p, ent } = tf.tidy(() => stats(hh, ww));
    const a = tf.tidy(() => tf.add(dlp, tf.mul(dent, tf.add(logp, ent))));
    tf.dispose([logp, ent]);
    const pa = tf.mul(p, a);
    tf.dispose([p, a]);
    const target = tf.tidy(() => tf.mul(tf.oneHot(tgt, V), dlp));
    let g = tf.sub(target, pa);
    tf.dispose([target, pa, dlp, dent]);
    if (tau !== 1) {
      const scaled = tf.div(g, tau);
      g.dispose();
      g = scaled;
    }
    return g as tf.Tensor2D;
  };
  // Tensors the backward pass needs are saved (kept alive by the engine), never closed over:
  // the caller's tidy disposes its intermediates before gradients are taken. The exception is a
  // weight that is a variable (the model's LM head): it outlives the pass, and saving it would
  // copy all `[V, D]` of it once per chunk (tfjs saves a clone; 622 MB a chunk for Qwen3-0.6B).
  if (weightGrad) {
    const live = W instanceof tf.Variable;
    const f: Grad = (hh, ww, save) => {
      const tgt = tf.cast(targets, 'int32') as tf.Tensor1D;
      (save as tf.GradSaveFunc)(live ? [hh as tf.Tensor, tgt] : [hh as tf.Tensor, tgt, ww as tf.Tensor]);
      return {
        value: tf.tidy(() => forward(hh as tf.Tensor2D, ww as tf.Tensor2D, tgt)),
        gradFunc: (dy, saved) =>
          tf.tidy(() => {
            const [sh, st] = saved as [tf.Tensor2D, tf.Tensor1D];
            const sw = live ? W : (saved[2] as tf.Tensor2D);
            const g = dLogits(sh, sw, st, dy);
            return [tf.matMul(g, sw), tf.matMul(swapLast(g) as tf.Tensor2D, sh)];
          }),
      };
    };
    return tf.customGrad(f as never)(h, W) as tf.Tensor;
  }
  const f: Grad = (hh, save) => {
    const tgt = tf.cast(targets, 'int32') as tf.Tensor1D;
    (save as tf.GradSaveFunc)([hh as tf.Tensor, tgt]);
    return {
      value: tf.tidy(() => forward(hh as tf.Tensor2D, W, tgt)),
      // W is a live variable owned by the model, so closing over it is safe here.
      gradFunc: (dy, saved) => tf.tidy(() => tf.matMul(dLogits(saved[0] as tf.Tensor2D, W, saved[1] as tf.Tensor1D, dy), W)),
    };
  };
  return tf.customGrad(f as never)(h) as tf.Tensor;
}

/**
 * The slow, obviously-correct twin of `tokenLogprobs`: a full `[B, T, V]` log-softmax through
 * tfjs autodiff. For tests and small vocabularies only.
 */
export function tokenLogprobsReference(hidden: tf.Tensor3D, weight: tf.Tensor2D, targets: tf.Tensor2D, temperature = 1): TokenLogprobs {
  return tf.tidy(() => {
    const [B, T, D] = hidden.shape;
    const V = weight.shape[0];
    const z = tf.div(tf.matMul(tf.reshape(hidden, [B * T, D]), weight, false, true), temperature);
    const logp = tf.logSoftmax(z, 1);
    const oh = tf.oneHot(tf.cast(tf.reshape(targets, [B * T]), 'int32') as tf.Tensor1D, V);
    const lp = tf.reshape(tf.sum(tf.mul(logp, oh), 1), [B, T]) as tf.Tensor2D;
    const ent = tf.reshape(tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)), [B, T]) as tf.Tensor2D;
    return { logprobs: lp, entropy: ent };
  });
}
