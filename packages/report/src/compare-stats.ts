/**
 * The statistics of `rlvr compare` (`@rlvr/reference-trainer`): pure functions of finished runs, no I/O.
 *
 * Every estimator is trained on the same seeds (so the same problems in the same order), and
 * each number in the table is a mean over those seeds with its sample standard deviation. The
 * noise verdict is a rule of thumb, not a significance test: a difference of means within two
 * standard errors of the difference (Welch) is called "within the seed spread".
 */

/** The summary file `runCompare` writes into OUT. */
export const COMPARE_FILE = 'compare.json';

/** The fields of a held-out evaluation (a line of a train run's evals.jsonl) the comparison uses. */
export interface CompareEval {
  step: number;
  /** mean over problems of correct / n */
  accuracy: number;
  passAtN: number;
  n: number;
  problems: number;
  greedyAccuracy?: number;
}

/** One finished (or resumed) training run of the comparison. */
export interface CompareRun {
  estimator: string;
  seed: number;
  /** the run directory (a normal `rlvr train` directory) */
  dir: string;
  /** step 0 first, the final step last */
  evals: CompareEval[];
  /** wall seconds of one training step, evaluation excluded (`runCompare`: the median over the run's steps) */
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

/**
 * The first eval step whose accuracy is >= `threshold`, or null when no eval reached it.
 * Accuracies are multiples of 1 / (problems x n), so ties are common: a 1e-9 tolerance keeps
 * `0.1 + 0.05` from missing an accuracy of exactly 0.15.
 */
export function stepsToThreshold(evals: readonly CompareEval[], threshold: number): number | null {
  for (const e of evals) if (e.accuracy >= threshold - 1e-9) return e.step;
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
  /** greedy accuracy at the last eval; null unless every run has one */
  greedy: MeanStd | null;
  /** steps to reach the threshold, per seed in `seeds` order (null: not reached within the run) */
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
  /** final accuracy against `CompareTable.alsoVs` (grpo beside the paper's dr-grpo); null on that row or without one */
  alsoVerdict: NoiseVerdict | null;
}

export interface CompareTable {
  /** the estimator others are compared with */
  baseline: string;
  /** why it is the baseline: given, `dr-grpo` (the GRAIL paper's baseline) or `grpo` by default, or the first estimator */
  baselineReason: 'given' | 'dr-grpo' | 'grpo' | 'first';
  /** a second estimator every row is also compared with: `grpo` when the default baseline is `dr-grpo` and grpo is compared; else null */
  alsoVs: string | null;
  /**
   * What "steps to threshold" asks for: `gain`: accuracy at least `value` above the run's own
   * step-0 accuracy (the same for every estimator on one seed: same checkpoint, same eval samples);
   * `accuracy`: an absolute accuracy `value`.
   */
  threshold: Threshold;
  /** the n of pass@n (samples per held-out problem) */
  n: number;
  problems: number;
  /** the step of the final eval (the same for all runs when all finished) */
  finalStep: number;
  rows: CompareRow[];
}

/** "Steps to threshold": a gain over the run's starting accuracy, or an absolute accuracy. */
export interface Threshold {
  kind: 'gain' | 'accuracy';
  value: number;
}

/** The default threshold: 5 points above the starting accuracy. */
export const DEFAULT_THRESHOLD: Threshold = { kind: 'gain', value: 0.05 };

/** The accuracy `run` must reach. A gain is not capped: a run starting at 100% cannot gain 5 points. */
export function thresholdFor(t: Threshold, evals: readonly CompareEval[]): number {
  return t.kind === 'accuracy' ? t.value : evals[0]!.accuracy + t.value;
}

/**
 * The comparison table of `runs` (each estimator x seed once). `estimators` fixes the row order;
 * the baseline is `options.baseline`, else `dr-grpo` when present (the GRAIL paper's baseline:
 * r - mean, no std division), with `grpo` beside it when present too, else `grpo`, else the first
 * estimator.
 */
export function summarize(
  runs: readonly CompareRun[],
  estimators: readonly string[],
  options: { baseline?: string; threshold?: Threshold } = {},
): CompareTable {
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
  } else if (byEstimator.has('dr-grpo')) [baseline, baselineReason] = ['dr-grpo', 'dr-grpo'];
  else if (byEstimator.has('grpo')) [baseline, baselineReason] = ['grpo', 'grpo'];
  else [baseline, baselineReason] = [estimators[0]!, 'first'];
  const alsoVs = baselineReason === 'dr-grpo' && byEstimator.has('grpo') ? 'grpo' : null;
  const finalAccuracy = (e: string) => byEstimator.get(e)!.map((r) => r.evals.at(-1)!.accuracy);

  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  const final = (r: CompareRun) => r.evals.at(-1)!;
  const baseRuns = byEstimator.get(baseline)!;
  const baseSeconds = meanStd(baseRuns.map((r) => r.secondsPerStep)).mean;
  const baseAccuracy = baseRuns.map((r) => final(r).accuracy);

  const rows = estimators.map((estimator): CompareRow => {
    const list = [...byEstimator.get(estimator)!].sort((a, b) => a.seed - b.seed);
    const thresholdSteps = list.map((r) => stepsToThreshold(r.evals, thresholdFor(threshold, r.evals)));
    const hit = thresholdSteps.filter((s): s is number => s !== null);
    const secondsPerStep = meanStd(list.map((r) => r.secondsPerStep)).mean;
    const accuracy = list.map((r) => final(r).accuracy);
    return {
      estimator,
      seeds: list.map((r) => r.seed),
      start: meanStd(list.map((r) => r.evals[0]!.accuracy)),
      accuracy: meanStd(accuracy),
      passAtN: meanStd(list.map((r) => final(r).passAtN)),
      greedy: list.every((r) => final(r).greedyAccuracy !== undefined) ? meanStd(list.map((r) => final(r).greedyAccuracy!)) : null,
      thresholdSteps,
      reached: hit.length,
      meanStepsToThreshold: hit.length === 0 ? null : meanStd(hit).mean,
      secondsPerStep,
      stepTimeRatio: secondsPerStep / baseSeconds,
      verdict: estimator === baseline ? null : noiseVerdict(accuracy, baseAccuracy),
      alsoVerdict: alsoVs === null || estimator === alsoVs || estimator === baseline ? null : noiseVerdict(accuracy, finalAccuracy(alsoVs)),
    };
  });
  const first = final(runs[0]!);
  return { baseline, baselineReason, alsoVs, threshold, n: first.n, problems: first.problems, finalStep: first.step, rows };
}
