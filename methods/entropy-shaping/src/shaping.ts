import { AdvantagesError, type Metrics } from '@rlvr/advantages';
import type { RolloutBatch } from '@rlvr/core';

/**
 * Entropy-based advantage shaping (Cheng et al. 2025, "Reasoning with Exploration: An Entropy
 * Perspective", arXiv:2506.14758): out[t] = A[t] + min(alpha * H[t], |A[t]| / kappa), with H[t] the
 * entropy of the policy's next-token distribution at token t, a constant (no gradient flows through
 * it). The term is added, never multiplied, and is at most |A|/kappa, so with kappa > 1 it never
 * flips the advantage's sign; where A is 0 it is 0. A zero term leaves A bit for bit (alpha = 0 gives
 * the base advantages exactly, -0 included). Computed in float64, rounded once to float32.
 * Shapes: advantages, entropy, out [T]. A negative or non-finite entropy is an
 * `AdvantagesError('invalid_signal')` naming the rollout.
 */
export function shapeAdvantages(
  batch: RolloutBatch,
  advantages: Float32Array,
  entropy: Float32Array,
  alpha: number,
  kappa: number,
  out: Float32Array,
): Metrics {
  const o = batch.completionOffsets;
  let termSum = 0;
  let capped = 0;
  let entropySum = 0;
  let absShaped = 0;
  for (let i = 0; i < batch.numRollouts; i++) {
    for (let t = o[i]!; t < o[i + 1]!; t++) {
      const h = entropy[t]!;
      if (!(h >= 0 && h < Infinity))
        throw new AdvantagesError('invalid_signal', `policy.entropy must be finite and >= 0, found ${h} at token ${t - o[i]!}`, {
          rollout: i,
          field: 'policy.entropy',
        });
      const a = advantages[t]!;
      const cap = Math.abs(a) / kappa;
      const raw = alpha * h;
      const term = Math.min(raw, cap);
      if (raw > cap) capped++;
      const v = term === 0 ? a : a + term;
      out[t] = v;
      termSum += term;
      entropySum += h;
      absShaped += Math.abs(out[t]!);
    }
  }
  const T = o[batch.numRollouts]!;
  return {
    entropy_shaping_term_mean: T > 0 ? termSum / T : Number.NaN,
    entropy_shaping_capped_frac: T > 0 ? capped / T : Number.NaN,
    entropy_shaping_entropy_mean: T > 0 ? entropySum / T : Number.NaN,
    entropy_shaping_abs_mean: T > 0 ? absShaped / T : Number.NaN,
  };
}
