/**
 * The text of `rlvr compare`: a fixed-width table and one noise verdict line per estimator.
 * Pure: the command prints what these return.
 */
import { percent, textTable } from '@rlvr/core';
import type { CompareRow, CompareTable, MeanStd, NoiseVerdict } from './compare-stats.js';

const points = (x: number): string => (100 * x).toFixed(1);
const signedPoints = (x: number): string => `${x >= 0 ? '+' : '-'}${points(Math.abs(x))}`;

/** `52.3% ± 1.2` (std in percentage points); just `52.3%` with one seed. */
export function formatMeanStd(m: MeanStd): string {
  return Number.isFinite(m.std) ? `${percent(m.mean)} ± ${points(m.std)}` : percent(m.mean);
}

/** `40 (3/3)`: mean steps over the seeds that reached the threshold, and how many did. */
function formatThreshold(r: CompareRow): string {
  const mean = r.meanStepsToThreshold;
  const steps = mean === null ? '-' : Number.isInteger(mean) ? String(mean) : mean.toFixed(1);
  return `${steps} (${r.reached}/${r.seeds.length})`;
}

/** The verdict of one estimator against the baseline, on final accuracy. */
export function formatVerdict(estimator: string, baseline: string, v: NoiseVerdict, seeds: number): string {
  const head = `${estimator} vs ${baseline}: final accuracy ${signedPoints(v.diff)} points`;
  if (v.within === null) return `${head}; noise n/a: one seed (run more --seeds to tell a difference from seed noise)`;
  const band = `|diff| ${v.within ? '<=' : '>'} 2 x Welch SE = ${points(2 * v.se)} points`;
  return v.within
    ? `${head}, within the seed spread (${band}): not distinguishable from seed noise with ${seeds} seeds`
    : `${head}, beyond the seed spread (${band})`;
}

/** The whole report: context lines, the table, the verdicts. */
export function formatCompare(t: CompareTable, context: { steps: number; seeds: readonly number[] }): string {
  const base = t.rows.find((r) => r.estimator === t.baseline)!;
  // a greedy column when every run decoded greedily too (the default of rlvr train)
  const greedy = t.rows.every((r) => r.greedy !== null);
  const seeds = context.seeds;
  const baselineWhy = {
    'dr-grpo': " (the GRAIL paper's baseline)",
    grpo: " (dr-grpo, the GRAIL paper's baseline, is not in the list)",
    given: ' (--baseline)',
    first: ' (the first estimator: neither dr-grpo nor grpo is in the list)',
  }[t.baselineReason];
  const start = t.rows.flatMap((r) => r.start.mean);
  const target = t.threshold.kind === 'gain' ? `+${points(t.threshold.value)} pts` : percent(t.threshold.value);
  const targetWhy =
    t.threshold.kind === 'gain'
      ? `accuracy ${points(t.threshold.value)} points above the run's own step-0 accuracy`
      : `accuracy ${percent(t.threshold.value)}`;
  const lines = [
    `rlvr compare: ${t.rows.length} estimators x ${seeds.length} seed${seeds.length === 1 ? '' : 's'} (${seeds.join(', ')}), ${context.steps} steps each, same seeds and data order for every estimator`,
    `held-out: ${t.problems} problems x ${t.n} samples; final = step ${t.finalStep}; starting accuracy (step 0) ${percent(start.reduce((a, b) => a + b, 0) / start.length)}; mean ± std over seeds`,
    '',
    textTable(
      [
        'estimator',
        'final accuracy',
        `pass@${t.n}`,
        ...(greedy ? ['greedy'] : []),
        `steps to ${target}`,
        's/step',
        `time vs ${t.baseline}`,
      ],
      t.rows.map((r) => [
        r.estimator,
        formatMeanStd(r.accuracy),
        formatMeanStd(r.passAtN),
        ...(greedy ? [formatMeanStd(r.greedy!)] : []),
        formatThreshold(r),
        r.secondsPerStep.toFixed(2),
        `${r.stepTimeRatio.toFixed(2)}x`,
      ]),
    ),
    '',
    `baseline: ${t.baseline}${baselineWhy}; steps to ${target}: first eval step with ${targetWhy}, mean over the seeds that reached it (reached/seeds); s/step: median training step, evaluation excluded`,
  ];
  const also = t.rows.find((r) => r.estimator === t.alsoVs);
  for (const r of t.rows) {
    if (r.verdict !== null) lines.push(formatVerdict(r.estimator, t.baseline, r.verdict, Math.min(r.seeds.length, base.seeds.length)));
    if (r.alsoVerdict !== null && also !== undefined)
      lines.push(formatVerdict(r.estimator, also.estimator, r.alsoVerdict, Math.min(r.seeds.length, also.seeds.length)));
  }
  return lines.join('\n');
}
