import { z } from 'zod';
import { ESTIMATOR_METRIC as M, SIGNAL_NAMES, SPAN, SPAN_STRIDE } from '@rlvr/core';
import type { TokenWeighting } from '../types.js';
import { badScore, maxCompletionLength } from './scores.js';
import { selectKthBits } from './select.js';

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
    // [T] the float32 scores' bit patterns: for s >= 0 their unsigned order is the numeric order
    const bits = new Uint32Array(scores.buffer, scores.byteOffset, scores.length);
    const { tau, beta, floor, eps } = config;
    const offsets = batch.completionOffsets;
    const B = batch.numRollouts;
    const maxLen = maxCompletionLength(offsets, B);
    const w = new Float64Array(maxLen); // [n] ln(1 + s), then the weights before renormalising, of the current rollout
    const candidates = new Uint32Array(maxLen);
    const positive = new Uint32Array(maxLen);
    const counts = new Int32Array(2048);
    const choice = new Float64Array(3); // [high, low, floor] candidates of the current token
    const f32 = new Float32Array(1);
    const f32Bits = new Uint32Array(f32.buffer);
    let noAnswer = 0;
    let below = 0;
    let weightedTokens = 0;
    for (let i = 0; i < B; i++) {
      const c0 = offsets[i]!;
      const n = offsets[i + 1]! - c0;
      if (batch.spans[i * SPAN_STRIDE + SPAN.openStart]! < 0) {
        out.fill(1, c0, c0 + n);
        noAnswer++;
        continue;
      }
      if (n === 0) continue;
      // ln(1 + s) is increasing, so min, max and the order statistic of I = ln(1 + s)
      // are ln(1 + .) of those of s: found on the raw bits, one log each.
      let minBits = 0xffffffff;
      let maxBits = 0;
      let negativeZero = false;
      for (let t = c0; t < c0 + n; t++) {
        let x = bits[t]!;
        if (x >= 0x7f800000) {
          if (x !== 0x80000000) badScore(SIGNAL, i, t - c0, scores[t]!); // NaN, infinite, negative
          x = 0; // -0 is 0
          negativeZero = true;
        }
        if (x < minBits) minBits = x;
        if (x > maxBits) maxBits = x;
      }
      f32Bits[0] = minBits;
      const lo = Math.log1p(f32[0]!);
      f32Bits[0] = maxBits;
      const range = Math.log1p(f32[0]!) - lo + eps;
      const rank = Math.min(Math.floor(tau * n), n - 1);
      if (negativeZero) {
        // rare: select on a copy with -0 written as +0, so the unsigned order holds
        for (let t = 0; t < n; t++) positive[t] = bits[c0 + t] === 0x80000000 ? 0 : bits[c0 + t]!;
        f32Bits[0] = selectKthBits(positive, 0, n, rank, counts, candidates);
      } else {
        f32Bits[0] = selectKthBits(bits, c0, n, rank, counts, candidates);
      }
      // reciprocals: one multiply per token instead of a divide (a 1-ulp difference).
      // thr is scaled exactly like the tokens, so the threshold token gets v == thr.
      const invRange = 1 / range;
      const thr = (Math.log1p(f32[0]!) - lo) * invRange;
      // The log gets its own loop: a call clobbers the float registers, and here
      // nothing else is live across it.
      for (let t = 0; t < n; t++) w[t] = Math.log1p(scores[c0 + t]!);
      const lowScale = 1 / (thr + eps);
      const highScale = beta / (1 - thr + eps);
      choice[2] = floor;
      let sum = 0;
      for (let t = 0; t < n; t++) {
        const v = (w[t]! - lo) * invRange;
        const low = v * lowScale;
        // w = v < thr ? max(low, floor) : high, chosen by index: the comparison is
        // unpredictable, and a mispredicted branch costs more than the arithmetic
        choice[0] = 1 + highScale * (v - thr);
        choice[1] = low;
        const isLow = +(v < thr); // unary plus: a flag, not a branch
        below += isLow;
        const wt = choice[isLow + (isLow & +(low < floor))]!;
        w[t] = wt;
        sum += wt;
      }
      const k = n / sum;
      for (let t = 0; t < n; t++) out[c0 + t] = w[t]! * k;
      weightedTokens += n;
    }
    return {
      [M.fallbackRate]: B > 0 ? noAnswer / B : 0,
      [M.answerFoundRate]: B > 0 ? (B - noAnswer) / B : 0,
      [M.fracBelowThreshold]: weightedTokens > 0 ? below / weightedTokens : 0,
    };
  },
};
