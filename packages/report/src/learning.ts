/**
 * Whether a run learns, read from its held-out evaluations: the gain from the first to the last
 * in paired standard errors, the worst fall between two consecutive evaluations after the run's
 * midpoint (a run that learns does not wander back down), and the share of the first
 * evaluation's gap between mean accuracy and pass@n that the run closed (sharpening turns
 * pass@n into pass@1, so that gap is what RL can gain without new abilities).
 */
import { type PairedDifference, pairedDifference } from './paired-difference.js';
import type { EvalRecord } from './run-dir.js';

export interface LearningCheck {
  /** last - first evaluation, per problem */
  gain: PairedDifference;
  /** gain.mean / gain.standardError (NaN with one problem) */
  gainSe: number;
  /** the step halfway between the first and the last evaluation */
  midpoint: number;
  /** the evaluation after the midpoint that fell most below the one before it; `null` when none fell or none is after it */
  worstFall: { step: number; previousStep: number; change: PairedDifference; se: number } | null;
  /** (last accuracy - first) / (first pass@n - first accuracy); NaN when the first has no gap */
  gapClosed: number;
}

/**
 * The check over `evals` in step order. `null` with fewer than two evaluations or when they did
 * not score the same problems with the same n (nothing to pair).
 */
export function learningCheck(evals: readonly EvalRecord[]): LearningCheck | null {
  const first = evals[0];
  const last = evals.at(-1);
  if (first === undefined || last === undefined || last === first) return null;
  if (evals.some((e) => e.problems !== first.problems || e.n !== first.n)) return null;
  const gain = pairedDifference(first.correct, last.correct, first.n);
  const midpoint = (first.step + last.step) / 2;
  let worstFall: LearningCheck['worstFall'] = null;
  for (let i = 1; i < evals.length; i++) {
    const e = evals[i]!;
    if (e.step <= midpoint) continue;
    const change = pairedDifference(evals[i - 1]!.correct, e.correct, first.n);
    if (change.mean >= 0) continue;
    const se = change.mean / change.standardError;
    if (worstFall === null || change.mean < worstFall.change.mean)
      worstFall = { step: e.step, previousStep: evals[i - 1]!.step, change, se };
  }
  const gap = first.passAtN - first.accuracy;
  return {
    gain,
    gainSe: gain.mean / gain.standardError,
    midpoint,
    worstFall,
    gapClosed: gap > 0 ? (last.accuracy - first.accuracy) / gap : Number.NaN,
  };
}

const signed = (x: number, digits = 1): string => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;

/** One line: `+14.2 points = 5.3 paired s.e.; after step 24 the worst fall ... ; 48% of the gap to pass@8 closed`. */
export function formatLearning(c: LearningCheck, n: number): string {
  const gain = Number.isFinite(c.gainSe)
    ? `${signed(100 * c.gain.mean)} points = ${c.gainSe.toFixed(1)} paired s.e.`
    : `${signed(100 * c.gain.mean)} points (no s.e.)`;
  const fall =
    c.worstFall === null
      ? `no evaluation after step ${c.midpoint} fell below the one before it`
      : `worst fall after step ${c.midpoint}: ${signed(100 * c.worstFall.change.mean)} points (${Number.isFinite(c.worstFall.se) ? `${c.worstFall.se.toFixed(1)} s.e.` : 'no s.e.'}) from step ${c.worstFall.previousStep} to ${c.worstFall.step}`;
  const gap = Number.isFinite(c.gapClosed) ? `; ${Math.round(100 * c.gapClosed)}% of the gap to pass@${n} closed` : '';
  return `${gain}; ${fall}${gap}`;
}
