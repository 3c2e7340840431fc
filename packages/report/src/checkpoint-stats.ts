/**
 * The GRAIL reference's U-shape over checkpoints (`compute_checkpoint_stats.py`): the token weights
 * of evaluation rollouts, recomputed at each checkpoint with symmetry `both`, pooled over the
 * **reasoning tokens only** (those before the first `\boxed{`) at relative position t / (R - 1).
 * Unlike the whole-completion profile, the answer content (forced to w_max) and the post-answer
 * tokens (forced to w_mean) are left out, so a rise at the right end is not built in.
 */
import type { CheckpointWeightRecord } from './run-dir.js';

/** One position bin of one checkpoint: `[lo, hi)` of t / (R - 1), the last bin closed. */
export interface ReasoningBin {
  lo: number;
  hi: number;
  /** mean weight over every reasoning token in the bin, pooled over rollouts; null when none */
  mean: number | null;
  tokens: number;
}

/** The profile of one checkpoint. */
export interface CheckpointProfile {
  step: number;
  bins: ReasoningBin[];
  /** rollouts pooled (with a box and R >= 2) */
  rollouts: number;
  /** rollouts of the step left out: no box, or fewer than 2 reasoning tokens */
  skipped: number;
}

/**
 * Per checkpoint step (ascending): reasoning token t of a rollout with R reasoning tokens (R >= 2)
 * sits at t / (R - 1) in [0, 1] and falls in bin min(bins - 1, floor(bins * t / (R - 1))); each bin
 * is the mean over all its tokens (pooled, as the reference pools them).
 */
export function reasoningProfiles(records: readonly CheckpointWeightRecord[], bins: number): CheckpointProfile[] {
  const steps = [...new Set(records.map((r) => r.step))].sort((a, b) => a - b);
  return steps.map((step) => {
    const sum = new Float64Array(bins);
    const count = new Int32Array(bins);
    let rollouts = 0;
    let skipped = 0;
    for (const r of records) {
      if (r.step !== step) continue;
      const R = r.reasoning;
      if (R === null || R < 2) {
        skipped++;
        continue;
      }
      rollouts++;
      for (let t = 0; t < R; t++) {
        const b = Math.min(bins - 1, Math.floor((bins * t) / (R - 1)));
        sum[b]! += r.weights[t]!;
        count[b]!++;
      }
    }
    return {
      step,
      rollouts,
      skipped,
      bins: Array.from({ length: bins }, (_, b) => ({
        lo: b / bins,
        hi: (b + 1) / bins,
        mean: count[b]! > 0 ? sum[b]! / count[b]! : null,
        tokens: count[b]!,
      })),
    };
  });
}
