import type { SignalName } from '@rlvr/core';

/**
 * Per-completion-token scores of a batch, aligned with `batch.completionTokens` (or, from a
 * backend of shape `rollout`, `width` scores per rollout).
 * Rollouts without scores (no answer span, or an empty one) hold 0 and are flagged in
 * `hasScores`; no value is ever NaN.
 */
export interface SaliencyResult {
  /** The core signal these scores stand for (`saliency.gradXEmb`, ...). */
  signal: SignalName;
  /** `[totalTokens]` raw scores, >= 0; from a backend of shape `rollout`, `[B * width]` finite values. */
  scores: Float32Array;
  /** Scores per rollout of a `rollout`-shaped result (`[B, width]`); default 1. */
  width?: number;
  /** `[B]` 1 where the rollout has scores. */
  hasScores: Uint8Array;
  /** Number of rollouts without scores. */
  missing: number;
  /**
   * `[B]` the per-rollout loss the scores differentiate (GRAIL: L_ans; OAR-G: the KL at the
   * noisy embeddings); 0 where a rollout has no scores. Absent for `precomputed` and `perturbation`.
   */
  loss?: Float32Array;
  /**
   * `[totalTokens]` log p(token | context) of every completion token at the configured
   * temperature, when the backend's pass computed them (a fused pass): the "old" log-probs.
   */
  logprobs?: Float32Array;
  /** `[totalTokens]` entropy of the next-token distribution that predicted each token, with `logprobs`. */
  entropy?: Float32Array;
}

/** The result of a fused pass: scores plus the token log-probs and entropies of the same forward pass. */
export interface FusedResult extends SaliencyResult {
  logprobs: Float32Array;
  entropy: Float32Array;
}

/** Recount `missing` from `hasScores`. */
export function countMissing(r: SaliencyResult): SaliencyResult {
  let m = 0;
  for (let i = 0; i < r.hasScores.length; i++) if (!r.hasScores[i]) m++;
  r.missing = m;
  return r;
}
