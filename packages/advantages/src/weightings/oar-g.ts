import { z } from 'zod';
import { SIGNAL_NAMES, SPAN_STRIDE } from '@rlvr/core';
import type { TokenWeighting } from '../types.js';
import { badScore, maxCompletionLength } from './scores.js';
import { selectKth } from './select.js';

export const OarGConfigSchema = z.strictObject({
  /** threshold quantile: the floor(tau * n)-th smallest normalised score (0-indexed) */
  tau: z.number().min(0).max(1).default(0.4),
  /** boost above the threshold: weights rise linearly from 1 to 1 + beta */
  beta: z.number().nonnegative().default(2),
  /** smallest weight below the threshold */
  floor: z.number().nonnegative().default(0.1),
  /** guards the min-max range and the two divisions (reference `oar_g_eps`) */
  eps: z.number().positive().default(1e-12),
});
export type OarGConfig = z.output<typeof OarGConfigSchema>;

const SIGNAL = SIGNAL_NAMES.noisyKl;

/**
 * OAR-G token weights (as in declare-lab/grail `compute_oar_g_weights`) from the
 * raw scores s_t = |sum_d g_td e~_td| (`saliency.noisyKl`, [T]). Per rollout with
 * an answer, over its n completion tokens:
 *   I_t = ln(1 + s_t),  I^_t = (I_t - min I) / (max I - min I + eps),
 *   thr = the floor(tau n)-th smallest I^ (0-indexed, clamped to n - 1),
 *   w_t = max(I^_t / (thr + eps), floor)               if I^_t < thr,
 *   w_t = 1 + beta (I^_t - thr) / (1 - thr + eps)      otherwise,
 *   w_t <- w_t * n / sum(w)    (mean exactly 1; the reference adds 1e-8 to the sum).
 * No answer: 1 everywhere. No symmetry, no clip, no span overrides.
 */
export const oarG: TokenWeighting<typeof OarGConfigSchema> = {
  name: 'oar-g',
  description: 'OAR-G: min-max log1p noisy-KL saliency, threshold at the tau order statistic, renormalised to mean 1',
  configSchema: OarGConfigSchema,
  needs: [SIGNAL],
  compute(batch, signals, _seq, config, out) {
    const scores = signals.get(SIGNAL, 'weighting oar-g');
    const { tau, beta, floor, eps } = config;
    const offsets = batch.completionOffsets;
    const B = batch.numRollouts;
    const maxLen = maxCompletionLength(offsets, B);
    const norm = new Float64Array(maxLen); // [n] I^ then w of the current rollout
    const work = new Float64Array(maxLen); // [n] quickselect scratch
    let noAnswer = 0;
    let below = 0;
    let weightedTokens = 0;
    for (let i = 0; i < B; i++) {
      const c0 = offsets[i]!;
      const n = offsets[i + 1]! - c0;
      if (batch.spans[i * SPAN_STRIDE]! < 0) {
        out.fill(1, c0, c0 + n);
        noAnswer++;
        continue;
      }
      if (n === 0) continue;
      let lo = Infinity;
      let hi = -Infinity;
      for (let t = 0; t < n; t++) {
        const s = scores[c0 + t]!;
        if (!(s >= 0 && s < Infinity)) badScore(SIGNAL, i, t, s);
        const v = Math.log1p(s);
        norm[t] = v;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      const range = hi - lo + eps;
      for (let t = 0; t < n; t++) {
        const v = (norm[t]! - lo) / range;
        norm[t] = v;
        work[t] = v;
      }
      const thr = selectKth(work, n, Math.min(Math.floor(tau * n), n - 1));
      const lowDiv = thr + eps;
      const highScale = beta / (1 - thr + eps);
      let sum = 0;
      for (let t = 0; t < n; t++) {
        const v = norm[t]!;
        let w: number;
        if (v < thr) {
          w = v / lowDiv;
          if (w < floor) w = floor;
          below++;
        } else {
          w = 1 + highScale * (v - thr);
        }
        norm[t] = w;
        sum += w;
      }
      const k = n / sum;
      for (let t = 0; t < n; t++) out[c0 + t] = norm[t]! * k;
      weightedTokens += n;
    }
    return {
      fallback_rate: B > 0 ? noAnswer / B : 0,
      answer_found_rate: B > 0 ? (B - noAnswer) / B : 0,
      frac_below_threshold: weightedTokens > 0 ? below / weightedTokens : 0,
    };
  },
};
