import { z } from 'zod';
import { ESTIMATOR_METRIC as M, SIGNAL_NAMES, SPAN, SPAN_STRIDE } from '@rlvr/core';
import type { TokenWeighting } from '../types.js';
import { badScore, maxCompletionLength } from './scores.js';

export const GrailConfigSchema = z
  .strictObject({
    /** spread of the weights: w = wMean + sigmaW * z (the reference's `grail_std`) */
    sigmaW: z.number().positive().default(0.5),
    /** centre of the weights, and the value of delimiter and post-answer tokens */
    wMean: z.number().finite().default(1),
    /** lower clip bound (reference code default 0.1, its configs and README 0.5) */
    wMin: z.number().finite().default(0.5),
    /** upper clip bound, and the value of answer-content tokens */
    wMax: z.number().finite().default(5),
    /** in ln(s + eps) and in sigma = sqrt(var + eps) */
    eps: z.number().positive().default(1e-8),
    /**
     * Which rollouts get saliency weights, by the sign of their sequence advantage A:
     * `wrong` A <= 0, `correct` A > 0, `both` all. The others get weight 1.
     */
    symmetry: z.enum(['wrong', 'correct', 'both']).default('wrong'),
    /**
     * Whether the answer overrides (content -> wMax, delimiters and post-answer -> wMean)
     * also apply to rollouts the symmetry setting excludes. `true` is the published
     * reference code (with `wrong`, a correct rollout is 1 everywhere except its
     * answer content, which gets wMax); `false` follows the paper's text (excluded
     * rollouts are 1 everywhere).
     */
    overrideExcluded: z.boolean().default(true),
  })
  .superRefine((c, ctx) => {
    if (!(c.wMin <= c.wMean && c.wMean <= c.wMax)) {
      ctx.addIssue({ code: 'custom', path: ['wMin'], message: `need wMin <= wMean <= wMax, found ${c.wMin}, ${c.wMean}, ${c.wMax}` });
    }
  });
export type GrailConfig = z.output<typeof GrailConfigSchema>;

const SIGNAL = SIGNAL_NAMES.gradXEmb;

/**
 * GRAIL token weights (declare-lab/grail `compute_grail_weights`) from the raw
 * scores s_t = ||dL_ans/de_t * e_t||_2 (`saliency.gradXEmb`, [T]) and the answer spans.
 * Per rollout with an answer that the symmetry setting selects, over all its n
 * completion tokens (answer, delimiters, post-answer and EOS included):
 *   l_t = ln(s_t + eps),  mu = mean(l),  sigma = sqrt(mean((l - mu)^2) + eps),
 *   w_t = clip(wMean + sigmaW (l_t - mu) / sigma, wMin, wMax).
 * Then overrides: answer content -> wMax; open and close delimiters -> wMean;
 * post-answer tokens (from the end of the close delimiter, EOS included) -> wMean.
 * No answer: 1 everywhere. Excluded by symmetry: 1, then the overrides if
 * `overrideExcluded`.
 */
export const grail: TokenWeighting<typeof GrailConfigSchema> = {
  name: 'grail',
  description: 'GRAIL: z-scored log grad x embedding saliency, clipped, answer overrides',
  configSchema: GrailConfigSchema,
  needs: [SIGNAL],
  compute(batch, signals, seq, config, out) {
    const scores = signals.get(SIGNAL, 'weighting grail');
    const { sigmaW, wMean, wMin, wMax, eps, symmetry, overrideExcluded } = config;
    const offsets = batch.completionOffsets;
    const spans = batch.spans;
    const B = batch.numRollouts;
    // [max completion length] log-scores of the current rollout
    const logs = new Float64Array(maxCompletionLength(offsets, B));
    let noAnswer = 0;
    let excluded = 0;
    let weightedTokens = 0;
    let clippedLow = 0;
    let clippedHigh = 0;
    for (let i = 0; i < B; i++) {
      const c0 = offsets[i]!;
      const c1 = offsets[i + 1]!;
      const n = c1 - c0;
      const o = i * SPAN_STRIDE;
      if (spans[o + SPAN.openStart]! < 0) {
        out.fill(1, c0, c1);
        noAnswer++;
        continue;
      }
      const a = seq[i]!;
      const selected = symmetry === 'both' || (symmetry === 'wrong' ? a <= 0 : a > 0);
      if (selected) {
        let sum = 0;
        for (let t = 0; t < n; t++) {
          const s = scores[c0 + t]!;
          if (!(s >= 0 && s < Infinity)) badScore(SIGNAL, i, t, s);
          const l = Math.log(s + eps);
          logs[t] = l;
          sum += l;
        }
        const mu = sum / n;
        let ss = 0;
        for (let t = 0; t < n; t++) {
          const d = logs[t]! - mu;
          ss += d * d;
        }
        // w = wMean + sigmaW (l - mu) / sigma, folded into w = scale * l + shift
        const scale = sigmaW / Math.sqrt(ss / n + eps);
        const shift = wMean - scale * mu;
        for (let t = 0; t < n; t++) {
          const w = scale * logs[t]! + shift;
          // counted at the bounds as the reference does (<=, >=): a token that lands exactly on one counts
          if (w <= wMin) clippedLow++;
          if (w >= wMax) clippedHigh++;
          out[c0 + t] = w < wMin ? wMin : Math.min(w, wMax);
        }
        weightedTokens += n;
      } else {
        out.fill(1, c0, c1);
        excluded++;
        if (!overrideExcluded) continue;
      }
      out.fill(wMean, c0 + spans[o + SPAN.openStart]!, c0 + spans[o + SPAN.openEnd]!);
      out.fill(wMax, c0 + spans[o + SPAN.contentStart]!, c0 + spans[o + SPAN.contentEnd]!);
      out.fill(wMean, c0 + spans[o + SPAN.closeStart]!, c0 + spans[o + SPAN.closeEnd]!);
      out.fill(wMean, c0 + spans[o + SPAN.closeEnd]!, c1);
    }
    return {
      [M.fallbackRate]: B > 0 ? noAnswer / B : 0,
      [M.answerFoundRate]: B > 0 ? (B - noAnswer) / B : 0,
      [M.excludedRate]: B > 0 ? excluded / B : 0,
      [M.clipFracMin]: weightedTokens > 0 ? clippedLow / weightedTokens : 0,
      [M.clipFracMax]: weightedTokens > 0 ? clippedHigh / weightedTokens : 0,
    };
  },
};
