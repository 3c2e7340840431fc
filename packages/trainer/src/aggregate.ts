import { tf } from './tf.js';
import { z } from 'zod';

/**
 * How per-token losses become one scalar.
 * - `token-mean`: sum(l m) / N_tokens — every token weighs the same (DAPO, TRL default).
 * - `seq-mean-token-mean`: (1/N_seq) sum_i [sum_t l m / sum_t m] — GRPO's original form.
 * - `seq-mean-token-sum`: (1/N_seq) sum_i sum_t l m.
 * - `constant`: sum(l m) / C — Dr. GRPO; C = N_seq * maxCompletionLength unless given.
 */
export const AggregationModeSchema = z.enum(['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'constant']);
export type AggregationMode = z.infer<typeof AggregationModeSchema>;

/**
 * The global counts a micro-batch's loss is divided by, so that accumulating
 * micro-batches gives exactly the loss (and gradient) of one big batch.
 */
export interface AggregationScale {
  /** valid tokens in the whole (global) batch */
  tokens: number;
  /** sequences with at least one valid token in the whole batch */
  sequences: number;
  /** the divisor of `constant` mode */
  constant: number;
}

/**
 * Aggregate a micro-batch's per-token values into its share of the global loss.
 * @param values [B, T] per-token loss
 * @param mask [B, T] 1 for valid completion tokens, 0 for padding or masked rollouts
 */
export function aggregate(values: tf.Tensor, mask: tf.Tensor, mode: AggregationMode, scale: AggregationScale): tf.Scalar {
  return tf.tidy(() => {
    const masked = tf.mul(values, mask);
    switch (mode) {
      case 'token-mean':
        return tf.div(tf.sum(masked), Math.max(scale.tokens, 1)) as tf.Scalar;
      case 'seq-mean-token-mean': {
        const perSeq = tf.div(tf.sum(masked, 1), tf.maximum(tf.sum(mask, 1), 1));
        return tf.div(tf.sum(perSeq), Math.max(scale.sequences, 1)) as tf.Scalar;
      }
      case 'seq-mean-token-sum':
        return tf.div(tf.sum(masked), Math.max(scale.sequences, 1)) as tf.Scalar;
      case 'constant':
        return tf.div(tf.sum(masked), scale.constant) as tf.Scalar;
    }
  });
}

/**
 * The global scale of a batch from its per-rollout valid-token counts.
 * `constant` defaults to N_seq * max completion length (Dr. GRPO); pass
 * `constant` to use a fixed normaliser (the GRAIL reference uses 256 * 4096).
 */
export function aggregationScale(
  validTokensPerRollout: ArrayLike<number>,
  maxCompletionLength: number,
  constant?: number,
): AggregationScale {
  let tokens = 0;
  let sequences = 0;
  for (let i = 0; i < validTokensPerRollout.length; i++) {
    const n = validTokensPerRollout[i]!;
    tokens += n;
    if (n > 0) sequences++;
  }
  return { tokens, sequences, constant: constant ?? Math.max(validTokensPerRollout.length * maxCompletionLength, 1) };
}
