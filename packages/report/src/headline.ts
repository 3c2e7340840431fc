/**
 * The headline of a run: held-out accuracy before and after with the paired standard error of
 * the change, pass@n and greedy accuracy. `rlvr train` prints these lines when it finishes and
 * the report's summary shows the same ones, from `evals.jsonl`.
 */
import { percent, plural } from '@rlvr/core';
import type { EvalRecord } from './run-dir.js';

/** The change of a per-problem score between two evaluations of the same problems. */
export interface PairedDifference {
  /** mean over problems of (after - before) */
  mean: number;
  /** its standard error: sample std of the per-problem differences / sqrt(problems) */
  standardError: number;
  problems: number;
}

/**
 * Paired difference of per-problem accuracies (`correct / n`) between two evaluations of the
 * same problems. Pairing removes the problem-to-problem spread, which dominates the noise of
 * either accuracy alone. With one problem the standard error is NaN.
 */
export function pairedDifference(before: readonly number[], after: readonly number[], n: number): PairedDifference {
  if (before.length !== after.length)
    throw new RangeError(`pairedDifference: ${before.length} problems before, ${after.length} after; they must be the same problems`);
  const P = before.length;
  const d = before.map((b, i) => (after[i]! - b) / n);
  const mean = d.reduce((a, x) => a + x, 0) / P;
  const variance = P > 1 ? d.reduce((a, x) => a + (x - mean) ** 2, 0) / (P - 1) : Number.NaN;
  return { mean, standardError: Math.sqrt(variance / P), problems: P };
}

/** One headline item: `label: value` on a terminal, a table row in the report. */
export interface HeadlineRow {
  label: string;
  value: string;
}

/**
 * The headline of the first and last of `evals` (in step order): accuracy, pass@n and, when it
 * was measured, greedy accuracy, each `first at step A -> last at step B`, the accuracies with
 * `(+4.9 points, paired s.e. 1.2)` when both evaluations scored the same problems. With one
 * evaluation, its values alone. Empty for no evaluation.
 */
export function headlineRows(evals: readonly EvalRecord[]): HeadlineRow[] {
  const first = evals[0];
  const last = evals.at(-1);
  if (first === undefined || last === undefined) return [];
  const label = `held-out accuracy (${plural(first.problems, 'problem')}, mean of ${plural(first.n, 'sample')})`;
  if (last === first) {
    const rows = [
      { label, value: `${percent(first.accuracy)} at step ${first.step}` },
      { label: `pass@${first.n}`, value: percent(first.passAtN) },
    ];
    if (first.greedyAccuracy !== undefined) rows.push({ label: 'greedy accuracy', value: percent(first.greedyAccuracy) });
    return rows;
  }
  const paired = first.problems === last.problems && first.n === last.n;
  const change = (before: readonly number[] | undefined, after: readonly number[] | undefined, n: number): string => {
    if (!paired || before === undefined || after === undefined) return '';
    const d = pairedDifference(before, after, n);
    // one problem has no spread to estimate an error from: say so rather than print NaN
    const se = Number.isFinite(d.standardError)
      ? `paired s.e. ${(100 * d.standardError).toFixed(1)}`
      : `no s.e. from ${plural(d.problems, 'problem')}`;
    return ` (${d.mean >= 0 ? '+' : ''}${(100 * d.mean).toFixed(1)} points, ${se})`;
  };
  const rows: HeadlineRow[] = [
    {
      label,
      value: `${percent(first.accuracy)} at step ${first.step} -> ${percent(last.accuracy)} at step ${last.step}${change(first.correct, last.correct, first.n)}`,
    },
    { label: `pass@${first.n}`, value: `${percent(first.passAtN)} -> ${percent(last.passAtN)}` },
  ];
  if (first.greedyAccuracy !== undefined && last.greedyAccuracy !== undefined) {
    rows.push({
      label: 'greedy accuracy',
      value: `${percent(first.greedyAccuracy)} -> ${percent(last.greedyAccuracy)}${change(first.greedyCorrect, last.greedyCorrect, 1)}`,
    });
  }
  return rows;
}

/** The headline as terminal lines (`label: value`). */
export function headlineLines(evals: readonly EvalRecord[]): string[] {
  return headlineRows(evals).map((r) => `${r.label}: ${r.value}`);
}
