import { tf } from './tf.js';
import { stopGradient } from './stop-gradient.js';
import { z } from 'zod';

/**
 * Per-token estimators of KL(pi || pi_ref) from the sampled token's log-probs
 * (Schulman, "Approximating KL divergence"); with d = logp_ref - logp:
 * - `k1`: -d (unbiased, can be negative)
 * - `k2`: d^2 / 2
 * - `k3`: exp(d) - d - 1 (unbiased, non-negative; GRPO's choice)
 */
export const KlEstimatorSchema = z.enum(['k1', 'k2', 'k3']);
export type KlEstimator = z.infer<typeof KlEstimatorSchema>;

/**
 * @param logp [B, T] current policy log-probs (differentiable)
 * @param logpRef [B, T] reference policy log-probs (constants)
 * @returns [B, T] per-token KL estimate; d is clamped to ±20 for stability
 */
export function klPenalty(logp: tf.Tensor, logpRef: tf.Tensor, estimator: KlEstimator): tf.Tensor {
  return tf.tidy(() => {
    const d = tf.clipByValue(tf.sub(stopGradient(logpRef), logp), -20, 20);
    switch (estimator) {
      case 'k1':
        return tf.neg(d);
      case 'k2':
        return tf.mul(tf.square(d), 0.5);
      case 'k3':
        return tf.sub(tf.sub(tf.exp(d), d), 1);
    }
  });
}
