/**
 * The text of `rlvr compare`: a fixed-width table, then one line per contrast (the primary first).
 * Pure: the command prints what these return.
 */
import { percent, plural, textTable } from '@rlvr/core';
import { ALPHA, type Contrast } from './compare-contrasts.js';
import type { CompareRow, CompareRun, CompareTable, MeanStd } from './compare-stats.js';
import type { SequentialDecision } from './sequential.js';

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

/** A p-value to two significant digits (`0.0024`, `0.11`, `< 1e-6`). */
function formatP(p: number): string {
  if (!Number.isFinite(p)) return 'n/a';
  return p < 1e-6 ? '< 1e-6' : p >= 0.1 ? p.toFixed(2) : p.toPrecision(2);
}

/** One contrast: the difference with its interval, the tests, and the verdict at ALPHA (or the pairs it would need). */
export function formatContrast(c: Contrast, secondaries: number): string {
  const role = c.role === 'primary' ? 'primary' : `secondary (Holm over ${secondaries})`;
  const head = `${role}: ${c.a} - ${c.b}: final accuracy ${signedPoints(c.diff)} points`;
  if (c.detected === null) return `${head}; n/a: a side has one seed (run more --seeds to test it)`;
  const ci = `95% CI ${signedPoints(c.ci[0])} to ${signedPoints(c.ci[1])}`;
  const tests =
    c.test === 'paired t'
      ? `paired t p = ${formatP(c.p)}${c.role === 'secondary' ? ` (Holm ${formatP(c.adjustedP)})` : ''}, Wilcoxon p = ${formatP(c.wilcoxonP!)}, ${c.seeds.length} pairs`
      : `Welch p = ${formatP(c.p)}${c.role === 'secondary' ? ` (Holm ${formatP(c.adjustedP)})` : ''} (the seeds differ: not paired)`;
  if (c.detected) return `${head} (${ci}; ${tests}): a difference at alpha ${ALPHA}`;
  const power =
    c.pairsFor80 === null
      ? c.sdDiff === 0
        ? '; the paired differences do not vary (SD 0): no power estimate from them'
        : ''
      : `; 80% power at ${c.pairsFor80.map((x) => points(x.delta).replace('.0', '')).join('/')} points needs ${c.pairsFor80.map((x) => x.pairs ?? '>10000').join('/')} pairs`;
  return `${head} (${ci}; ${tests}): no difference detected at alpha ${ALPHA}${power}`;
}

/**
 * The whole report: context lines, the table, the verdicts; then, when given, how a sequential comparison
 * ended (`sequential`) and what the runs cost (`runs`, their `cpuSeconds`).
 */
export function formatCompare(
  t: CompareTable,
  context: { steps: number; seeds: readonly number[]; sequential?: SequentialDecision; runs?: readonly CompareRun[] },
): string {
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
    `held-out: ${plural(t.problems, 'problem')} x ${plural(t.n, 'sample')}; final = step ${t.finalStep}; starting accuracy (step 0) ${percent(start.reduce((a, b) => a + b, 0) / start.length)}; mean ± SD over seeds`,
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
  const secondaries = t.contrasts.filter((c) => c.role === 'secondary').length;
  if (t.contrasts.length > 0)
    lines.push(
      `contrasts on final accuracy, runs of one seed paired; the primary${t.primaryReason === 'given' ? ' (--primary)' : ''} unadjusted, the secondaries Holm-adjusted among themselves:`,
    );
  for (const c of t.contrasts) lines.push(formatContrast(c, secondaries));
  if (context.sequential !== undefined) lines.push(sequentialLine(context.sequential, seeds.length));
  if (context.runs !== undefined) lines.push(costLine(context.runs, seeds.length));
  const steps =
    context.runs === undefined
      ? null
      : stepQualityTable(
          context.runs,
          t.rows.map((r) => r.estimator),
        );
  if (steps !== null) lines.push('', steps);
  return lines.join('\n');
}

/**
 * The final evaluation's Step-Quality metrics (where the held-out problems have chains) per estimator: each run's
 * value (itself a mean over problems), then mean ± SD over the seeds that have it; null when no run has them.
 */
function stepQualityTable(runs: readonly CompareRun[], estimators: readonly string[]): string | null {
  const rows = estimators.flatMap((e) => {
    const qs = runs.filter((r) => r.estimator === e).flatMap((r) => r.evals.at(-1)?.stepQuality ?? []);
    if (qs.length === 0) return [];
    const cell = (xs: (number | null)[], f: (x: number) => string): string => {
      const v = xs.filter((x): x is number => x !== null);
      if (v.length === 0) return '-';
      const mean = v.reduce((a, x) => a + x, 0) / v.length;
      const sd = v.length < 2 ? null : Math.sqrt(v.reduce((a, x) => a + (x - mean) ** 2, 0) / (v.length - 1));
      return sd === null ? f(mean) : `${f(mean)} ± ${f(sd)}`;
    };
    return [
      [
        e,
        String(qs.length),
        cell(
          qs.map((q) => q.usefulDensity.mean),
          percent,
        ),
        cell(
          qs.map((q) => q.localised.mean),
          percent,
        ),
        cell(
          qs.map((q) => q.errorAt.mean),
          (x) => x.toFixed(2),
        ),
        cell(
          qs.map((q) => q.tokensPerSolved.value),
          (x) => x.toFixed(1),
        ),
      ],
    ];
  });
  if (rows.length === 0) return null;
  return [
    'step quality of the final evaluation (per run a mean over problems; here mean ± SD over seeds):',
    textTable(['estimator', 'seeds', 'useful steps', 'first error found', 'first error at', 'tokens/solved'], rows),
  ].join('\n');
}

/** How a sequential comparison ended: the look, its bound, and whether the primary is decided at overall alpha 0.05. */
function sequentialLine(d: SequentialDecision, pairs: number): string {
  const why = d.crossed
    ? `the primary contrast crossed its bound (paired t p below ${d.nominalAlpha.toPrecision(3)}): a difference at overall alpha 0.05`
    : `no bound crossed: no difference detected at overall alpha 0.05 (the last look's nominal alpha is ${d.nominalAlpha.toPrecision(3)})`;
  return `sequential: stopped at look ${d.look} of ${d.looks} (${pairs} pairs; O'Brien-Fleming bounds): ${why}`;
}

/** What the comparison cost: process CPU time (policy workers included) per seed, all estimators of that seed. */
function costLine(runs: readonly CompareRun[], seeds: number): string {
  const perSeed = runs.reduce((a, r) => a + (r.cpuSeconds ?? 0), 0) / 60 / seeds;
  return `cost: ${perSeed.toFixed(1)} CPU-minutes per seed (the ${runs.length / seeds} runs of one seed, evaluations included; process CPU time of this command, policy workers included; runs finished earlier and resumed count only what this command ran)`;
}
