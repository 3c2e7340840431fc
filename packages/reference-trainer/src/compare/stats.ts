/**
 * The statistics of `rlvr compare`: pure functions of finished runs, no I/O.
 *
 * Every estimator is trained on the same seeds (so the same problems in the same order), and
 * each number in the table is a mean over those seeds with its sample standard deviation. The
 * noise verdict is a rule of thumb, not a significance test: a difference of means within two
 * standard errors of the difference (Welch) is called "within the seed spread".
 */
import type { TrainEval } from '../train/run.js';

/** One finished (or resumed) training run of the comparison. */
export interface CompareRun {
  estimator: string;
  seed: number;
  /** the run directory (a normal `rlvr train` directory) */
  dir: string;
  /** step 0 first, the final step last */
  evals: TrainEval[];
  secondsPerStep: number;
  wallSeconds: number;
}

/** Mean and sample standard deviation (n - 1 denominator; NaN with fewer than two values). */
export interface MeanStd {
  mean: number;
  std: number;
  n: number;
}

export function meanStd(xs: readonly number[]): MeanStd {
  const n = xs.length;
  if (n === 0) return { mean: Number.NaN, std: Number.NaN, n };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const std = n < 2 ? Number.NaN : Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  return { mean, std, n };
}

/** The first eval step whose accuracy is >= `threshold`, or null when no eval reached it. */
export function stepsToThreshold(evals: readonly TrainEval[], threshold: number): number | null {
  for (const e of evals) if (e.accuracy >= threshold) return e.step;
  return null;
}

/** `within`: null when either side has one seed (no spread to compare against). */
export interface NoiseVerdict {
  /** mean(a) - mean(baseline) */
  diff: number;
  /** Welch standard error of the difference: sqrt(s_a^2 / n_a + s_b^2 / n_b); NaN with one seed */
  se: number;
  within: boolean | null;
}

/**
 * Is `mean(a) - mean(b)` within the seed spread? Within when |diff| <= 2 x the Welch standard
 * error of the difference; `within: null` when a side has a single seed.
 */
export function noiseVerdict(a: readonly number[], b: readonly number[]): NoiseVerdict {
  const sa = meanStd(a);
  const sb = meanStd(b);
  const diff = sa.mean - sb.mean;
  if (sa.n < 2 || sb.n < 2) return { diff, se: Number.NaN, within: null };
  const se = Math.sqrt(sa.std ** 2 / sa.n + sb.std ** 2 / sb.n);
  // a tolerance so that identical values (diff 0, se 0) and float noise count as within
  return { diff, se, within: Math.abs(diff) <= 2 * se + 1e-12 };
}

/** One estimator's line of the table. */
export interface CompareRow {
  estimator: string;
  seeds: number[];
  /** held-out accuracy at step 0 (the starting checkpoint) */
  start: MeanStd;
  /** held-out accuracy at the last eval */
  accuracy: MeanStd;
  /** pass@n at the last eval */
  passAtN: MeanStd;
  /** steps to reach the threshold, per seed in `seeds` order (null: not reached) */
  thresholdSteps: (number | null)[];
  /** how many seeds reached the threshold */
  reached: number;
  /** mean steps over the seeds that reached it (null when none did) */
  meanStepsToThreshold: number | null;
  /** mean over seeds of the mean seconds per training step */
  secondsPerStep: number;
  /** secondsPerStep / the baseline's */
  stepTimeRatio: number;
  /** final accuracy against the baseline's; null on the baseline's own row */
  verdict: NoiseVerdict | null;
}

export interface CompareTable {
  /** the estimator others are compared with */
  baseline: string;
  /** why it is the baseline */
  baselineReason: 'given' | 'grpo' | 'first';
  /** accuracy the "steps to threshold" column asks for */
  threshold: number;
  /** `given`: from the options; `start+0.05`: the mean step-0 accuracy over all runs plus 0.05 (at most 1) */
  thresholdReason: 'given' | 'start+0.05';
  /** the n of pass@n (samples per held-out problem) */
  n: number;
  problems: number;
  /** the step of the final eval (the same for all runs when all finished) */
  finalStep: number;
  rows: CompareRow[];
}

/** The default threshold is this far above the mean starting accuracy. */
export const THRESHOLD_MARGIN = 0.05;

/**
 * The comparison table of `runs` (each estimator x seed once). `estimators` fixes the row order;
 * the baseline is `options.baseline`, else `grpo` when present, else the first estimator.
 */
export function summarize(runs: readonly CompareRun[], estimators: readonly string[], options: { baseline?: string; threshold?: number } = {}): CompareTable {
  if (estimators.length === 0) throw new Error('summarize: no estimators');
  const byEstimator = new Map<string, CompareRun[]>(estimators.map((e) => [e, []]));
  for (const r of runs) {
    const list = byEstimator.get(r.estimator);
    if (list === undefined) throw new Error(`summarize: run of ${r.estimator}, which is not among the estimators`);
    if (r.evals.length === 0) throw new Error(`summarize: run ${r.dir} has no evals`);
    list.push(r);
  }
  for (const [e, list] of byEstimator) if (list.length === 0) throw new Error(`summarize: no runs of ${e}`);

  let baseline: string;
  let baselineReason: CompareTable['baselineReason'];
  if (options.baseline !== undefined) {
    if (!byEstimator.has(options.baseline)) throw new Error(`summarize: baseline ${options.baseline} is not among the estimators`);
    [baseline, baselineReason] = [options.baseline, 'given'];
  } else if (byEstimator.has('grpo')) [baseline, baselineReason] = ['grpo', 'grpo'];
  else [baseline, baselineReason] = [estimators[0]!, 'first'];

  const startAll = meanStd(runs.map((r) => r.evals[0]!.accuracy)).mean;
  const threshold = options.threshold ?? Math.min(1, startAll + THRESHOLD_MARGIN);
  const final = (r: CompareRun) => r.evals.at(-1)!;
  const baseRuns = byEstimator.get(baseline)!;
  const baseSeconds = meanStd(baseRuns.map((r) => r.secondsPerStep)).mean;
  const baseAccuracy = baseRuns.map((r) => final(r).accuracy);

  const rows = estimators.map((estimator): CompareRow => {
    const list = [...byEstimator.get(estimator)!].sort((a, b) => a.seed - b.seed);
    const thresholdSteps = list.map((r) => stepsToThreshold(r.evals, threshold));
    const hit = thresholdSteps.filter((s): s is number => s !== null);
    const secondsPerStep = meanStd(list.map((r) => r.secondsPerStep)).mean;
    const accuracy = list.map((r) => final(r).accuracy);
    return {
      estimator,
      seeds: list.map((r) => r.seed),
      start: meanStd(list.map((r) => r.evals[0]!.accuracy)),
      accuracy: meanStd(accuracy),
      passAtN: meanStd(list.map((r) => final(r).passAtN)),
      thresholdSteps,
      reached: hit.length,
      meanStepsToThreshold: hit.length === 0 ? null : meanStd(hit).mean,
      secondsPerStep,
      stepTimeRatio: secondsPerStep / baseSeconds,
      verdict: estimator === baseline ? null : noiseVerdict(accuracy, baseAccuracy),
    };
  });
  const first = final(runs[0]!);
  return { baseline, baselineReason, threshold, thresholdReason: options.threshold === undefined ? 'start+0.05' : 'given', n: first.n, problems: first.problems, finalStep: first.step, rows };
}
