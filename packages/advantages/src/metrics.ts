import { ESTIMATOR_METRIC as M, WEIGHT_STATS, estimatorWeightKey, type RolloutBatch } from '@rlvr/core';
import type { Metrics } from './types.js';

/**
 * Writes advantages[t] = sequenceAdvantages[i] * weights[t] and, in the same pass,
 * the weight statistics over tokens split by correct (reward > 0) and wrong
 * rollouts: `weight_{mean,std,min,max}` plus `_correct` / `_wrong` variants (std
 * is the population std; NaN when the split has no token), the mean |A| before and
 * after weighting, and the two ratios of those means: ours over tokens, and the GRAIL
 * reference's `advantages_scale_ratio`, whose denominator is a mean over rollouts.
 * Shapes: weights and advantages [T], sequenceAdvantages [B].
 */
export function applyWeights(
  batch: RolloutBatch,
  weights: Float32Array,
  sequenceAdvantages: Float64Array,
  advantages: Float32Array,
): Metrics {
  // index 0: wrong, 1: correct
  const count = [0, 0];
  const sum = [0, 0];
  const sumSq = [0, 0];
  const min = [Infinity, Infinity];
  const max = [-Infinity, -Infinity];
  let absRaw = 0;
  let absWeighted = 0;
  let absPerRollout = 0;
  const offsets = batch.completionOffsets;
  for (let i = 0; i < batch.numRollouts; i++) {
    const k = batch.rewards[i]! > 0 ? 1 : 0;
    const c0 = offsets[i]!;
    const c1 = offsets[i + 1]!;
    const adv = sequenceAdvantages[i]!;
    const a = Math.abs(adv);
    let s = 0;
    let s2 = 0;
    let sAbs = 0;
    let lo = min[k]!;
    let hi = max[k]!;
    for (let t = c0; t < c1; t++) {
      const w = weights[t]!;
      advantages[t] = adv * w;
      s += w;
      s2 += w * w;
      sAbs += Math.abs(w);
      if (w < lo) lo = w;
      if (w > hi) hi = w;
    }
    count[k]! += c1 - c0;
    sum[k]! += s;
    sumSq[k]! += s2;
    min[k] = lo;
    max[k] = hi;
    absRaw += a * (c1 - c0);
    absPerRollout += a;
    absWeighted += a * sAbs;
  }
  const stats = (n: number, s: number, s2: number, lo: number, hi: number) => {
    if (n === 0) return [NaN, NaN, NaN, NaN] as const;
    const mean = s / n;
    return [mean, Math.sqrt(Math.max(0, s2 / n - mean * mean)), lo, hi] as const;
  };
  const all = stats(
    count[0]! + count[1]!,
    sum[0]! + sum[1]!,
    sumSq[0]! + sumSq[1]!,
    Math.min(min[0]!, min[1]!),
    Math.max(max[0]!, max[1]!),
  );
  const wrong = stats(count[0]!, sum[0]!, sumSq[0]!, min[0]!, max[0]!);
  const correct = stats(count[1]!, sum[1]!, sumSq[1]!, min[1]!, max[1]!);
  const tokens = count[0]! + count[1]!;
  const metrics: Metrics = {};
  WEIGHT_STATS.forEach((stat, j) => {
    metrics[estimatorWeightKey('all', stat)] = all[j]!;
    metrics[estimatorWeightKey('correct', stat)] = correct[j]!;
    metrics[estimatorWeightKey('wrong', stat)] = wrong[j]!;
  });
  const B = batch.numRollouts;
  const raw = tokens > 0 ? absRaw / tokens : 0;
  const weighted = tokens > 0 ? absWeighted / tokens : 0;
  const perRollout = B > 0 ? absPerRollout / B : 0;
  metrics[M.advantageAbsMeanRaw] = raw;
  metrics[M.advantageAbsMean] = weighted;
  // token mean of |A w| over token mean of |A|: what the weighting does to |A| per token (NaN when every A is 0)
  metrics[M.advantageScaleRatioTokens] = weighted / raw;
  // the reference's pair: rollout mean of |A| (`advantages_raw_abs_mean`), and the token mean of |A w|
  // over it, with its 1e-8 (`advantages_scale_ratio`)
  metrics[M.advantageAbsMeanRawRollouts] = perRollout;
  metrics[M.advantagesScaleRatio] = weighted / (perRollout + 1e-8);
  return metrics;
}
