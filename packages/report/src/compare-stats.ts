/**
 * The statistics of `rlvr compare` (`@rlvr/reference-trainer`): pure functions of finished runs, no I/O.
 *
 * Every estimator is trained on the same seeds (so the same problems in the same order), and each number in the
 * table is a mean over those seeds with its sample standard deviation (SD, not SE). The contrasts between
 * estimators are tests (compare-contrasts.ts): paired by seed, with a primary contrast declared up front.
 */
import { type Contrast, compareContrasts } from './compare-contrasts.js';
import type { StepQualityRecord } from './run-dir.js';

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
  /** per held-out problem, how many of its n samples were right (kept so the tests can be recomputed anywhere) */
  correct?: number[];
  /** per held-out problem, 1 when the greedy answer was right */
  greedyCorrect?: number[];
  /** the Step-Quality metrics, where the held-out problems have chains (the synthetic tasks) */
  stepQuality?: StepQualityRecord;
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
  /** CPU seconds of the process while it ran (every thread: the policy workers' too); absent in older files */
  cpuSeconds?: number;
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
}

export interface CompareTable {
  /** the estimator others are compared with */
  baseline: string;
  /** why it is the baseline: given, `dr-grpo` (the GRAIL paper's baseline) or `grpo` by default, or the first estimator */
  baselineReason: 'given' | 'dr-grpo' | 'grpo' | 'first';
  /** a second estimator every row is also compared with: `grpo` when the default baseline is `dr-grpo` and grpo is compared; else null */
  alsoVs: string | null;
  /** the primary contrast first (`options.primary`, else grail or the first other row against the baseline), then the secondaries */
  contrasts: Contrast[];
  /** why the primary is the primary: given (`--primary`) or chosen by default */
  primaryReason: 'given' | 'default';
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

/** `0.55` or `55%`: an accuracy; `+0.05` or `+5%`: a gain over the run's step-0 accuracy; anything else a RangeError. */
export function parseThreshold(v: string): Threshold {
  const m = /^(\+?)(\d+(?:\.\d*)?|\.\d+)(%?)$/.exec(v.trim());
  const x = m === null ? Number.NaN : Number(m[2]) / (m[3] === '%' ? 100 : 1);
  if (!(x >= 0 && x <= 1))
    throw new RangeError(
      `must be an accuracy (0.55 or 55%) or a gain over the starting accuracy (+0.05 or +5%) (got ${JSON.stringify(v)})`,
    );
  return { kind: m![1] === '+' ? 'gain' : 'accuracy', value: x };
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
  options: { baseline?: string; threshold?: Threshold; primary?: readonly [string, string] } = {},
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

  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  const final = (r: CompareRun) => r.evals.at(-1)!;
  const baseRuns = byEstimator.get(baseline)!;
  const baseSeconds = meanStd(baseRuns.map((r) => r.secondsPerStep)).mean;

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
    };
  });
  const { contrasts, primaryReason } = contrastsOf(byEstimator, estimators, baseline, alsoVs, options.primary);
  const first = final(runs[0]!);
  return {
    baseline,
    baselineReason,
    alsoVs,
    contrasts,
    primaryReason,
    threshold,
    n: first.n,
    problems: first.problems,
    finalStep: first.step,
    rows,
  };
}

/**
 * The contrasts shown: the primary (given, else `grail` against the baseline, else the first other row), then every
 * other row against the baseline and against `alsoVs`. No contrast with a single estimator.
 */
function contrastsOf(
  byEstimator: ReadonlyMap<string, CompareRun[]>,
  estimators: readonly string[],
  baseline: string,
  alsoVs: string | null,
  given: readonly [string, string] | undefined,
): { contrasts: Contrast[]; primaryReason: CompareTable['primaryReason'] } {
  if (given !== undefined) {
    for (const e of given)
      if (!byEstimator.has(e)) throw new Error(`summarize: primary contrast ${given.join(':')}: ${e} is not among the estimators`);
    if (given[0] === given[1]) throw new Error(`summarize: primary contrast ${given.join(':')} compares an estimator with itself`);
  }
  const others = estimators.filter((e) => e !== baseline);
  if (given === undefined && others.length === 0) return { contrasts: [], primaryReason: 'default' };
  const primary: readonly [string, string] = given ?? [others.includes('grail') ? 'grail' : others[0]!, baseline];
  const same = (x: readonly [string, string], y: readonly [string, string]) =>
    (x[0] === y[0] && x[1] === y[1]) || (x[0] === y[1] && x[1] === y[0]);
  const secondary: [string, string][] = [];
  const add = (c: [string, string]) => {
    if (!same(c, primary) && !secondary.some((s) => same(s, c))) secondary.push(c);
  };
  for (const e of others) {
    add([e, baseline]);
    if (alsoVs !== null && e !== alsoVs) add([e, alsoVs]);
  }
  const acc = new Map(
    [...byEstimator].map(([e, list]) => [e, new Map(list.map((r) => [r.seed, r.evals.at(-1)!.accuracy] as [number, number]))]),
  );
  return { contrasts: compareContrasts(acc, primary, secondary), primaryReason: given === undefined ? 'default' : 'given' };
}
