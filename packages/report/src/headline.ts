/**
 * The headline of a run: held-out accuracy before and after with the paired standard error of
 * the change, pass@n and greedy accuracy. `rlvr train` prints these lines when it finishes and
 * the report's summary shows the same ones, from `evals.jsonl`.
 */
import { percent, plural } from '@rlvr/core';
import { formatLearning, learningCheck } from './learning.js';
import { pairedDifference } from './paired-difference.js';
import type { EvalRecord } from './run-dir.js';

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
  // with a midpoint to look past: does the run learn (gain in s.e., no fall back, gap to pass@n)
  const learning = evals.length >= 3 ? learningCheck(evals) : null;
  if (learning !== null) rows.push({ label: 'learning', value: formatLearning(learning, first.n) });
  return rows;
}

/** The headline as terminal lines (`label: value`). */
export function headlineLines(evals: readonly EvalRecord[]): string[] {
  return headlineRows(evals).map((r) => `${r.label}: ${r.value}`);
}
