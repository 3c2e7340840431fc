import { tf } from './tf.js';
import { stopGradient } from './stop-gradient.js';

/** Options of the clipped policy-gradient surrogate. */
export interface SurrogateOptions {
  /** lower clip: ratio >= 1 - clipLow (PPO epsilon) */
  clipLow: number;
  /** upper clip: ratio <= 1 + clipHigh (clip-higher, DAPO) */
  clipHigh: number;
  /** dual clip constant c > 1 for negative advantages (Ye et al. 2020); null disables */
  dualClip: number | null;
  /** the log-ratio is clamped to [-logRatioClamp, logRatioClamp] before exp */
  logRatioClamp: number;
}

/** Per-token outputs of the surrogate, all `[B, T]`. */
export interface SurrogateTerms {
  /** the per-token loss l = max(-A r, -A clip(r)) (then dual-clipped) */
  loss: tf.Tensor;
  /** importance ratio r = exp(clamp(logp - logpOld)) */
  ratio: tf.Tensor;
  /** 1 where the clipped branch is active on the low side (A < 0, r < 1 - clipLow) */
  clippedLow: tf.Tensor;
  /** 1 where the clipped branch is active on the high side (A > 0, r > 1 + clipHigh) */
  clippedHigh: tf.Tensor;
}

/**
 * PPO/GRPO clipped surrogate per token, with the advantages as constants
 * (they carry no gradient: token weights act only through them).
 *
 *   r = exp(clamp(logp - logpOld, ±C))
 *   l = max(-A r, -A clip(r, 1 - clipLow, 1 + clipHigh))
 *   l = min(l, -A c)    where A < 0 and dual clip c is set
 *
 * @param logp [B, T] log-probs of the sampled tokens under the current policy (differentiable)
 * @param logpOld [B, T] the behaviour ("old") log-probs, constants
 * @param advantages [B, T] per-token advantages, constants
 */
export function clippedSurrogate(logp: tf.Tensor, logpOld: tf.Tensor, advantages: tf.Tensor, opts: SurrogateOptions): SurrogateTerms {
  return tf.tidy(() => {
    const adv = stopGradient(advantages);
    const logRatio = tf.clipByValue(tf.sub(logp, stopGradient(logpOld)), -opts.logRatioClamp, opts.logRatioClamp);
    const ratio = tf.exp(logRatio);
    const negAdv = tf.neg(adv);
    const unclipped = tf.mul(negAdv, ratio);
    const clipped = tf.mul(negAdv, tf.clipByValue(ratio, 1 - opts.clipLow, 1 + opts.clipHigh));
    let loss = tf.maximum(unclipped, clipped);
    if (opts.dualClip !== null) {
      const capped = tf.minimum(loss, tf.mul(negAdv, opts.dualClip));
      loss = tf.where(tf.less(adv, 0), capped, loss);
    }
    const clippedLow = tf.cast(tf.logicalAnd(tf.less(adv, 0), tf.less(ratio, 1 - opts.clipLow)), 'float32');
    const clippedHigh = tf.cast(tf.logicalAnd(tf.greater(adv, 0), tf.greater(ratio, 1 + opts.clipHigh)), 'float32');
    return { loss, ratio, clippedLow, clippedHigh };
  });
}
