/**
 * `runCompare`: train every estimator on the same seeds (so the same problems in the same order,
 * the same sampling seeds per step) and summarize final held-out accuracy over the seeds.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { hasEstimator, knownNames, prepareEstimator } from '@rlvr/advantages';
import { deepMerge, formatZodIssues } from '@rlvr/core';
import { writeFileAtomic } from '@rlvr/core';
import { ReferenceTrainerError } from '../errors.js';
import { RUN_FILES } from '@rlvr/report';
import { parseTrainConfig } from '../train/config.js';
import type { TrainConfig } from '../train/config.js';
import { loadPlugins } from '../train/plugins.js';
import { runTrain } from '../train/run.js';
import type { TrainLogger, TrainProgress } from '../train/run.js';
import { parseSignalConfig } from '@rlvr/saliency';
import { COMPARE_FILE, CompareOptionsSchema, compareOptionsProblem, rateLabel, seedList, summarize } from '@rlvr/report';
import { tuneRates, tuneRecord } from '@rlvr/report';
import type { CompareOptions, CompareOptionsInput, CompareRun, CompareTable, TuneRecord } from '@rlvr/report';
import { VALIDATION_DEFINITION } from '@rlvr/rollout';
import { parseVariants, variantError, variantInput } from '@rlvr/report';
import type { Variant } from '@rlvr/report';

/** Progress of one run, with where it stands in the comparison. */
export interface CompareProgress extends TrainProgress {
  /** the row: an estimator or a variant name */
  estimator: string;
  seed: number;
  /** 1-based index of this run */
  run: number;
  runs: number;
}

/** Where progress goes; `info` lines of a run are prefixed with `ESTIMATOR seed S: `. */
export interface CompareLogger {
  info(message: string): void;
  warn?(message: string): void;
  progress?(p: CompareProgress): void;
}

export interface CompareResult {
  out: string;
  /** OUT/compare.json, or null when interrupted */
  file: string | null;
  estimators: string[];
  seeds: number[];
  steps: number;
  /** the runs finished so far, in run order (seed-major: every estimator on seed 0, then on seed 1, ...) */
  runs: CompareRun[];
  /** null when interrupted */
  table: CompareTable | null;
  /** the learning-rate tuning, with `tune` (null while interrupted) */
  tuned?: TuneRecord | null;
  interrupted: boolean;
}

/** `OUT/grpo/seed-0`; characters unsafe in a path become `_` (as in `rlvr train`'s default names). */
export function compareRunDir(out: string, estimator: string, seed: number): string {
  return join(out, estimator.replace(/[^A-Za-z0-9_.+-]/g, '_'), `seed-${seed}`);
}

/**
 * Train each estimator x seed with `runTrain` into `OUT/ESTIMATOR/seed-S`, each a normal run
 * directory, then write `OUT/compare.json` (atomically) with the table and the runs' evals.
 * Runs go one at a time, seed-major (every estimator on the first seed, then the next seed), so
 * a slow drift of the machine's load is spread over the estimators rather than landing on one;
 * the time per step of a run is the median of its `time/step_s` (the first, warm-up step of a
 * process is an outlier). Checked before any training: the options, every run's
 * config, the plugins, every estimator name (unknown ones listed with the available names) and
 * its options and signals, and — unless `resume` — that no run directory holds a metrics.jsonl.
 * With `resume`, finished runs are read back from their last checkpoint and partial ones continue.
 * `signal` stops after the current step of the current run (checkpoint saved); nothing is summarized.
 * `onStep` is told when a training step is in flight (true) and when none is (false: before each run, and
 * between steps), so a caller can stop at once outside a step (`stoppable` with `idle`).
 */
export async function runCompare(
  input: CompareOptionsInput,
  logger: CompareLogger = { info() {} },
  signal?: AbortSignal,
  onStep?: (inFlight: boolean) => void,
): Promise<CompareResult> {
  const parsed = CompareOptionsSchema.safeParse(input);
  if (!parsed.success)
    throw new ReferenceTrainerError(
      'invalid_options',
      `invalid compare options: ${formatZodIssues(parsed.error.issues, input)}`,
      {},
      { cause: parsed.error },
    );
  const o = parsed.data;
  const refuse = (message: string, file?: string): never => {
    throw new ReferenceTrainerError('invalid_options', message, file === undefined ? {} : { file });
  };
  const problem = compareOptionsProblem(o, (e) => compareRunDir(o.out, e, 0));
  if (problem !== undefined) refuse(problem);

  const variants = parseVariants(o.config.variants, o.configFile);
  const configs = resolveConfigs(o, variants, o.seeds, (row, seed) => compareRunDir(o.out, row, seed));
  // the tuning runs of the initial grid, checked (and refused when present) with the others
  const problems = o.tune?.problems ?? configs[0]!.config.eval.problems;
  const tuning = o.tune?.grid.flatMap((lr) => tuneConfigs(o, variants, lr, problems));
  await loadPlugins(configs[0]!.config.plugins);
  const perEstimator = o.config.estimatorConfigs;
  checkEstimators(
    o.estimators,
    configs,
    o.configFile,
    new Set(perEstimator !== null && typeof perEstimator === 'object' ? Object.keys(perEstimator) : []),
    variants,
  );
  if (!o.resume) {
    for (const { dir } of [...configs, ...(tuning ?? [])]) {
      const metrics = join(dir, RUN_FILES.metrics);
      if (existsSync(metrics))
        refuse(`${metrics} exists: pick another --out or pass --resume (a run directory is never overwritten)`, o.out);
    }
    const file = join(o.out, COMPARE_FILE);
    if (existsSync(file)) refuse(`${file} exists: pick another --out or pass --resume`, o.out);
  }

  // `--seeds 15` is fifteen seeds, not seed 15: say which before hours of training
  logger.info(
    `${o.estimators.length} estimator(s) x ${o.seeds.length} seed(s) (${seedList(o.seeds)}) = ${configs.length} runs -> ${o.out}`,
  );
  if (o.tune !== undefined)
    logger.info(
      `tune first: ${o.estimators.length} x ${o.tune.grid.length} rate(s) x ${o.tune.seeds.length} tuning seed(s) (${seedList(o.tune.seeds)}) = ${tuning!.length} runs on ${problems} validation problems, more where a grid widens (at most ${o.tune.maxWiden} rate(s) a row) -> ${join(o.out, 'tune')}`,
    );
  const steps = configs[0]!.config.steps;
  const runs: CompareRun[] = [];
  const result = (table: CompareTable | null, file: string | null, interrupted: boolean, tuned?: TuneRecord): CompareResult => ({
    out: o.out,
    file,
    estimators: o.estimators,
    seeds: o.seeds,
    steps,
    runs,
    table,
    ...(o.tune && { tuned: tuned ?? null }),
    interrupted,
  });
  const train = (planned: PlannedRun[], into: CompareRun[]) => trainRuns(planned, into, o.resume, logger, signal, onStep);
  let tuned: TuneRecord | undefined;
  if (o.tune !== undefined) {
    // each row's rate on the tuning seeds and the validation split; tuning runs are read back when finished
    const t = o.tune;
    const done: CompareRun[] = [];
    const trainAt = (points: { estimator: string; lr: number }[]) =>
      train(
        points.flatMap((p) => tuneConfigs(o, variants, p.lr, problems, [p.estimator])),
        done,
      );
    const accuracy = (row: string, lr: number) =>
      t.seeds.map((seed) => done.find((r) => r.estimator === tuneLabel(row, lr) && r.seed === seed)!.evals.at(-1)!.accuracy);
    const rows = await tuneRates(o.estimators, t, trainAt, accuracy, (m) => logger.info(m));
    if (rows === null) return result(null, null, true);
    tuned = tuneRecord(t, { problems, definition: VALIDATION_DEFINITION[o.config.data === undefined ? 'synthetic' : 'file'] }, rows);
    const rate = (row: string) => ({ lr: rows.find((r) => r.estimator === row)!.chosen });
    configs.splice(0, configs.length, ...resolveConfigs(o, variants, o.seeds, (row, seed) => compareRunDir(o.out, row, seed), rate));
  }
  if (await train(configs, runs)) return result(null, null, true, tuned);

  const table = summarize(runs, o.estimators, {
    ...(o.baseline === undefined ? {} : { baseline: o.baseline }),
    ...(o.threshold === undefined ? {} : { threshold: o.threshold }),
    ...(o.primary === undefined ? {} : { primary: o.primary }),
  });
  const { estimator: _e, seed: _s, estimatorConfig: _c, ...common } = configs[0]!.config;
  const file = join(o.out, COMPARE_FILE);
  const record = {
    command: 'compare',
    estimators: o.estimators,
    seeds: o.seeds,
    steps,
    ...table,
    runs: runs.map((r) => ({ ...r, dir: relative(o.out, r.dir) })),
    estimatorConfigs: Object.fromEntries(o.estimators.map((e) => [e, configs.find((c) => c.estimator === e)!.config.estimatorConfig])),
    ...(Object.keys(variants).length === 0
      ? {}
      : { variants: Object.fromEntries(o.estimators.filter((e) => variants[e] !== undefined).map((e) => [e, variants[e]])) }),
    config: common,
    // each row's rate and the tuning that chose it (the common config's rate is the first row's)
    ...(tuned && { tune: tuned }),
  };
  await writeFileAtomic(file, JSON.stringify(record, null, 2) + '\n');
  return result(table, file, false, tuned);
}

/**
 * Train `planned` one at a time (a finished run read back, a partial one continued with `resume`), each
 * finished run pushed onto `into`. True when stopped by `signal` (nothing more should run).
 */
async function trainRuns(
  planned: readonly PlannedRun[],
  into: CompareRun[],
  resume: boolean,
  logger: CompareLogger,
  signal?: AbortSignal,
  onStep?: (inFlight: boolean) => void,
): Promise<boolean> {
  for (const [i, { estimator, seed, dir, config }] of planned.entries()) {
    const label = `${estimator} seed ${seed}`;
    logger.info(`run ${i + 1}/${planned.length}: ${label} -> ${dir}`);
    const trainLogger: TrainLogger = {
      info: (m) => logger.info(`${label}: ${m}`),
      warn: (m) => (logger.warn ?? logger.info)(`${label}: ${m}`),
      progress: (p) => logger.progress?.({ ...p, estimator, seed, run: i + 1, runs: planned.length }),
    };
    // process CPU time: the policy workers' threads are in it (a resumed run counts this process's part only)
    const cpu0 = process.cpuUsage();
    // a run's start-up and step-0 evaluation are outside any step (the last run's last step may have left it set)
    onStep?.(false);
    const s = await runTrain(config, dir, {
      resume,
      logger: trainLogger,
      ...(signal === undefined ? {} : { signal }),
      ...(onStep === undefined ? {} : { onStep }),
    });
    const cpu = process.cpuUsage(cpu0);
    if (s.interrupted) return true;
    into.push({
      estimator,
      seed,
      dir,
      // the per-problem counts go into compare.json: anyone can recompute the tests from it
      evals: s.evals,
      secondsPerStep: s.secondsPerStep,
      wallSeconds: s.wallSeconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    });
    if (signal?.aborted && i + 1 < planned.length) return true;
  }
  return false;
}

/** A tuning run's row label, `grail lr 3e-5`, and its directory `OUT/tune/grail/lr-3e-5/seed-S`. */
const tuneLabel = (row: string, lr: number) => `${row} lr ${rateLabel(lr)}`;

/** The tuning runs of `rows` (default all) at `lr`: on the tuning seeds, evaluated on the validation split. */
function tuneConfigs(
  o: CompareOptions,
  variants: Readonly<Record<string, Variant>>,
  lr: number,
  problems: number,
  rows = o.estimators,
): PlannedRun[] {
  const dir = (row: string, seed: number) =>
    join(dirname(compareRunDir(join(o.out, 'tune'), row, seed)), `lr-${rateLabel(lr)}`, `seed-${seed}`);
  return resolveConfigs({ ...o, estimators: rows }, variants, o.tune!.seeds, dir, () => ({ lr, validation: { problems } })).map((r) => ({
    ...r,
    estimator: tuneLabel(r.estimator, lr),
  }));
}

interface PlannedRun {
  /** the row: an estimator, or a variant name (its estimator is `config.estimator`) */
  estimator: string;
  seed: number;
  dir: string;
  config: TrainConfig;
}

/**
 * Every run's train config: the base config with the estimator (or the variant), its options, the seed and `steps`
 * set; `patch` gives a row its learning rate (`trainer.schedule.lr`) and a validation split (the tuning runs).
 */
function resolveConfigs(
  o: CompareOptions,
  variants: Readonly<Record<string, Variant>>,
  seeds: readonly number[],
  dirOf: (row: string, seed: number) => string,
  patch?: (row: string) => { lr: number; validation?: { problems: number } },
): PlannedRun[] {
  const { estimatorConfigs, variants: _v, ...base } = o.config;
  const at = (field: string) => ({ ...(o.configFile === undefined ? {} : { file: o.configFile }), field });
  let perEstimator: Record<string, unknown> = {};
  if (estimatorConfigs !== undefined) {
    if (estimatorConfigs === null || typeof estimatorConfigs !== 'object' || Array.isArray(estimatorConfigs)) {
      throw new ReferenceTrainerError(
        'invalid_config',
        'estimatorConfigs must be an object of estimator options by estimator name',
        at('estimatorConfigs'),
      );
    }
    perEstimator = estimatorConfigs as Record<string, unknown>;
    const compared = o.estimators.map((e) => variants[e]?.estimator ?? e);
    const stray = Object.keys(perEstimator).filter((k) => !compared.includes(k));
    if (stray.length > 0) {
      throw new ReferenceTrainerError(
        'invalid_config',
        `estimatorConfigs names ${stray.map((s) => JSON.stringify(s)).join(', ')}, not among the estimators compared (${[...new Set(compared)].join(', ')})`,
        at('estimatorConfigs'),
      );
    }
  }
  return seeds.flatMap((seed) =>
    o.estimators.map((row) => {
      const v = variants[row];
      let input: Record<string, unknown> = { ...base, estimator: row, seed };
      if (o.steps !== undefined) input.steps = o.steps;
      if (v !== undefined) input = variantInput(input, v, perEstimator);
      else if (perEstimator[row] !== undefined) input.estimatorConfig = perEstimator[row];
      const p = patch?.(row);
      if (p !== undefined)
        input = {
          ...input,
          trainer: deepMerge((input.trainer ?? {}) as Record<string, unknown>, { schedule: { lr: p.lr } }),
          ...(p.validation && { validation: p.validation }),
        };
      let config: TrainConfig;
      try {
        config = parseTrainConfig(input, v === undefined ? o.configFile : undefined);
      } catch (err) {
        if (v === undefined) throw err;
        // the variant's own trainer options are what can fail here: name the field inside the variant
        const issue = (err as { cause?: { issues?: { path: PropertyKey[]; message: string }[] } }).cause?.issues?.[0];
        if (issue?.path[0] === 'trainer' && v.trainer !== undefined)
          throw new ReferenceTrainerError('invalid_config', issue.message, at(`variants.${row}.${issue.path.map(String).join('.')}`), {
            cause: err,
          });
        throw variantError(`variants.${row}`, err, o.configFile);
      }
      return { estimator: row, seed, dir: dirOf(row, seed), config };
    }),
  );
}

/** Variants first (each named on failure), then unknown names (all of them, with what is available), then each estimator's options and signals. */
function checkEstimators(
  names: readonly string[],
  configs: readonly PlannedRun[],
  configFile: string | undefined,
  perEstimator: ReadonlySet<string>,
  variants: Readonly<Record<string, Variant>>,
): void {
  for (const n of Object.keys(variants)) {
    if (hasEstimator(n))
      throw new ReferenceTrainerError('invalid_config', `${JSON.stringify(n)} is a registered estimator: name the variant otherwise`, {
        ...(configFile === undefined ? {} : { file: configFile }),
        field: `variants.${n}`,
      });
  }
  for (const n of names.filter((x) => variants[x] !== undefined)) {
    const config = configs.find((c) => c.estimator === n)!.config;
    if (!hasEstimator(config.estimator))
      throw variantError(`variants.${n}.estimator`, new Error(unknownMessage([config.estimator])), configFile);
    let needs;
    try {
      needs = prepareEstimator(config.estimator, config.estimatorConfig).needs;
    } catch (err) {
      throw variantError(`variants.${n}.estimatorConfig`, err, configFile);
    }
    try {
      parseSignalConfig(config.saliency, needs, {
        temperature: config.trainer.temperature,
        estimator: n,
        field: `variants.${n}.saliency`,
        temperatureField: `variants.${n}.trainer.temperature`,
      });
    } catch (err) {
      throw variantError((err as { location?: { field?: string } }).location?.field ?? `variants.${n}.saliency`, err, configFile);
    }
  }
  const plain = names.filter((x) => variants[x] === undefined);
  const unknown = plain.filter((n) => !hasEstimator(n));
  if (unknown.length > 0)
    throw new ReferenceTrainerError(
      'invalid_options',
      unknownMessage(unknown) + (Object.keys(variants).length > 0 ? `, or a variant (${Object.keys(variants).join(', ')})` : ''),
    );
  for (const n of plain) {
    const config = configs.find((c) => c.estimator === n)!.config;
    let needs;
    try {
      needs = prepareEstimator(n, config.estimatorConfig).needs;
    } catch (err) {
      const shared = !perEstimator.has(n);
      const hint = shared
        ? ' (estimatorConfig applies to every estimator compared: give options by name in estimatorConfigs, e.g. {"grail": {...}})'
        : '';
      throw new ReferenceTrainerError(
        'invalid_config',
        `options of estimator ${n}: ${(err as Error).message}${hint}`,
        { ...(configFile === undefined ? {} : { file: configFile }), field: shared ? 'estimatorConfig' : 'estimatorConfigs' },
        { cause: err },
      );
    }
    parseSignalConfig(config.saliency, needs, { temperature: config.trainer.temperature, estimator: n });
  }
}

function unknownMessage(unknown: readonly string[]): string {
  return `unknown estimator${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')}; ${knownNames()}`;
}
