/**
 * `rlvr compare`: argument parsing and terminal output. The runs and the statistics are
 * `runCompare` (run.ts) and `summarize` (stats.ts).
 */
import { applyOverrides, intFlag, readConfigObject, stoppable, timestamp, usageError, workersFlag } from '@rlvr/core';
import type { Command } from '@rlvr/core';
import { CONFIG_FLAGS, withPlugins } from '../command-input.js';
import { progressLine, stepLogger } from '@rlvr/core';
import {
  firstSeeds,
  formatCompare,
  formatTune,
  listFlag,
  looksFlag,
  maxWidenFlag,
  primaryFlag,
  seedsFlag,
  sequentialDecision,
} from '@rlvr/report';
import { thresholdFlag, tuneFlag, tuneSeedsFlag } from '@rlvr/report';
import type { CompareProgress } from './run.js';
import { COMPARE_FILE } from '@rlvr/report';
import type { SequentialDecision } from '@rlvr/report';

/** GRAIL against the paper's baseline (`dr-grpo`: r - mean, no std division) with the std-normalised `grpo` beside it, and OAR-G. */
const DEFAULT_ESTIMATORS = ['dr-grpo', 'grpo', 'grail', 'oar-g'] as const;

const COMPARE_USAGE = `usage: rlvr compare [options]

Train each estimator on the same seeds (same problems in the same order, same sampling seeds)
and compare them: final held-out accuracy and pass@n (mean ± SD over seeds), steps to reach an
accuracy threshold, time per step relative to the baseline, and the contrasts tested with the
runs of one seed as pairs (paired t with its 95% CI, exact Wilcoxon; Welch where the seeds
differ): the primary at alpha 0.05, the others Holm-adjusted, with the pairs 80% power would need
where nothing is detected. Each run is a normal run directory (rlvr report works on it). The
held-out evaluation defaults to 1024 problems x 8 samples, before the first and after the last step
only (set eval.problems / eval.every to change it). Progress goes to stderr, the table to stdout.

options:
  --estimators LIST   comma-separated estimator or variant names, one row each (default
                      ${DEFAULT_ESTIMATORS.join(',')}, then every variant of the config)
  --seeds N|LIST|auto N seeds counting up from the config's seed (default 3: 0,1,2), or a list such as 0,5,9;
                      auto: sequential, adding seeds up to --max-seeds and looking at the primary
                      contrast at --looks equally spaced points (O'Brien-Fleming bounds, overall
                      alpha 0.05); it stops at the first look whose bound is crossed
  --max-seeds N       with --seeds auto: the most seeds (pairs) to run (default 10)
  --looks K           with --seeds auto: the looks, 1 to 5 (default 3)
  --steps N           RL steps of every run (overrides the config)
  --config FILE       a rlvr train config (see docs/compare.md, schema/compare.schema.json); estimator
                      and seed are set per run. Its "variants" name rows with their own options:
                      {"grail-both": {"estimator": "grail", "estimatorConfig": {"symmetry": "both"},
                      "saliency": {...}, "trainer": {...}}}
  --KEY.KEY VALUE     set one nested option of that config, e.g. --trainer.schedule.lr 1e-5,
                      --estimatorConfigs.grail.wMin 0.3, --variants.grail-both.estimator grail
  --plugin FILE       a module that registers estimators (repeatable)
  --workers N|auto    policy worker threads of every run's update (default auto; see rlvr train --help)
  --threshold X       "steps to": an accuracy (0.55 or 55%) or a gain over each run's start (+0.05 or +5%; default +5%)
  --baseline NAME     the estimator others are compared with (default dr-grpo, the GRAIL paper's
                      baseline, with grpo beside it; else grpo; else the first)
  --primary A:B       the primary contrast, declared up front and judged unadjusted (default grail,
                      else the first other estimator, against the baseline)
  --tune lr=GRID      first tune each row's learning rate (trainer.schedule.lr; only lr is tunable for now):
                      GRID is rates (1e-5,3e-5,1e-4) or a log range A..BxN (1e-5..1e-3x3: 1e-5, 1e-4, 1e-3).
                      Each row trains at each rate on the tuning seeds, scored by final accuracy on a
                      validation split of the training problems (never trained on; not the held-out set);
                      its rate is the best mean (the lower on a tie). A best rate at an edge of the grid
                      adds the next rate beyond it (the grid's ratio there). Then the comparison runs on
                      --seeds, each row at its rate. Runs in OUT/tune/ROW/lr-X/seed-S (docs/compare.md)
  --tune-seeds N|LIST with --tune: the tuning seeds, N counting up from 1000 or a list; none may be a
                      comparison seed (default 2: 1000, 1001)
  --tune-max-widen K  with --tune: rates added to a row's grid at most (default 3); a choice still at an
                      edge then is said so in the output and compare.json
  --tune-problems N   with --tune: validation problems (default eval.problems)
  --out DIR           OUT/ROW/seed-S run directories and OUT/${COMPARE_FILE} (default runs/compare-TIME)
  --resume            continue finished or partial runs in --out (required) instead of refusing them
  --json              print ${COMPARE_FILE}'s contents instead of the table
  -q, --quiet         no progress
  -h, --help          this help

Ctrl-C or SIGTERM during a step stops after it (checkpoint saved; the line says which signal came);
outside one (a run's start-up or step-0 evaluation) it stops at once. Either way the same command with --resume continues.`;

/** `rlvr compare`. */
export const compareCommand: Command = {
  summary: 'train estimators on the same seeds; accuracy ± SD, paired tests, pass@n, steps to threshold, time',
  usage: COMPARE_USAGE,
  options: {
    ...CONFIG_FLAGS,
    estimators: { type: 'string', short: 'e' },
    seeds: { type: 'string' },
    'max-seeds': { type: 'string' },
    looks: { type: 'string' },
    plugin: { type: 'string', multiple: true },
    threshold: { type: 'string' },
    baseline: { type: 'string' },
    primary: { type: 'string' },
    workers: { type: 'string' },
    resume: { type: 'boolean' },
    json: { type: 'boolean' },
    tune: { type: 'string' },
    'tune-seeds': { type: 'string' },
    'tune-max-widen': { type: 'string' },
    'tune-problems': { type: 'string' },
  },
  graceful: true,
  dotted: true,
  async run({ values, io, signal, color, overrides = [] }) {
    const listed = values.estimators === undefined ? undefined : listFlag('estimators', values.estimators as string);
    const steps = intFlag(values, 'steps', { min: 1 });
    const threshold = values.threshold === undefined ? undefined : thresholdFlag(values.threshold as string);
    if (values.resume === true && values.out === undefined)
      throw usageError('needs --out: the comparison directory to continue', '--resume');
    const configFile = values.config as string | undefined;
    // Loaded only now: the schemas pull in tfjs, and usage errors should not wait for it.
    const schema = (await import('../config-schema.js')).configJsonSchemas().compare;
    const config = applyOverrides(
      withCompareEval(withPlugins(await readConfigObject(configFile), values.plugin as string[] | undefined)),
      overrides,
      schema,
    );
    const workers = workersFlag(values);
    if (workers !== undefined) config.workers = workers;
    const auto = values.seeds === 'auto';
    if (!auto && (values['max-seeds'] !== undefined || values.looks !== undefined))
      throw usageError('needs --seeds auto (a sequential comparison)', values.looks !== undefined ? '--looks' : '--max-seeds');
    const maxSeeds = auto ? (intFlag(values, 'max-seeds', { min: 2, max: 1000 }) ?? 10) : 0;
    const lookCount = auto ? (intFlag(values, 'looks', { min: 1, max: 5 }) ?? 3) : 0;
    const looks = auto ? looksFlag(maxSeeds, lookCount) : [];
    const seeds = auto ? firstSeeds(maxSeeds, config.seed) : seedsFlag((values.seeds as string | undefined) ?? '3', config.seed);
    // default rows: the four built-in estimators, then every variant of the config
    const variants = config.variants !== null && typeof config.variants === 'object' ? Object.keys(config.variants) : [];
    const estimators = listed ?? [...DEFAULT_ESTIMATORS, ...variants.filter((v) => !(DEFAULT_ESTIMATORS as readonly string[]).includes(v))];
    const baseline = values.baseline as string | undefined;
    if (baseline !== undefined && !estimators.includes(baseline))
      throw usageError(`${JSON.stringify(baseline)} is not among the estimators (${estimators.join(', ')})`, '--baseline');

    const primary = values.primary === undefined ? undefined : primaryFlag(values.primary as string, estimators);
    const tuneOnly = ['tune-seeds', 'tune-max-widen', 'tune-problems'].find((f) => values[f] !== undefined);
    if (values.tune === undefined && tuneOnly !== undefined) throw usageError('needs --tune lr=GRID', `--${tuneOnly}`);
    const tuneProblems = intFlag(values, 'tune-problems', { min: 1, max: 100_000 });
    const tune =
      values.tune === undefined
        ? undefined
        : {
            grid: tuneFlag(values.tune as string).grid,
            seeds: tuneSeedsFlag(values['tune-seeds'] as string | undefined, seeds),
            maxWiden: maxWidenFlag(values),
            ...(tuneProblems === undefined ? {} : { problems: tuneProblems }),
          };

    const out = (values.out as string | undefined) ?? defaultOut();
    const logger = stepLogger(
      'rlvr compare',
      values.quiet === true,
      io.stderr,
      color,
      (p: CompareProgress) => `${p.run}/${p.runs} ${p.estimator} s${p.seed} ${progressLine(p)}`,
    );
    const { runCompare } = await import('./run.js');
    // a signal outside a step (a run's start-up or step-0 evaluation) stops at once; one in a step lets it finish
    const compareOn = (on: number[], resume: boolean) =>
      stoppable(
        signal,
        logger,
        (inStep) =>
          runCompare(
            {
              estimators,
              seeds: on,
              config,
              out,
              resume,
              ...(configFile === undefined ? {} : { configFile }),
              ...(steps === undefined ? {} : { steps }),
              ...(threshold === undefined ? {} : { threshold }),
              ...(baseline === undefined ? {} : { baseline }),
              ...(primary === undefined ? {} : { primary }),
              ...(tune === undefined ? {} : { tune }),
            },
            logger,
            signal,
            inStep,
          ),
        { idle: true },
      ).catch((e: unknown) => {
        // stopped outside a step: the runs finished so far are on disk, the one begun continues with --resume
        if (signal.aborted)
          io.stderr.write(`rlvr compare: nothing summarized: rlvr compare --out ${out} --resume (same options) continues\n`);
        throw e;
      });
    let result = await compareOn(auto ? seeds.slice(0, looks[0]) : seeds, values.resume === true);
    let decision: SequentialDecision | undefined;
    for (let k = 0; auto && !result.interrupted && result.table !== null; k++) {
      const c = result.table.contrasts[0]!;
      decision = sequentialDecision(k + 1, looks.length, c.p);
      logger.info(
        `look ${k + 1}/${looks.length} at ${looks[k]} pairs: primary ${c.a} - ${c.b} paired t p = ${c.p.toPrecision(3)}, stop below ${decision.nominalAlpha.toPrecision(3)} (O'Brien-Fleming |z| >= ${decision.bound.toFixed(3)}): ${decision.crossed ? 'crossed, stopping' : decision.stop ? 'the last look' : 'going on'}`,
      );
      if (decision.stop) break;
      result = await compareOn(seeds.slice(0, looks[k + 1]), true);
    }
    if (result.interrupted || result.table === null || result.file === null) {
      io.stderr.write(
        `rlvr compare: stopped ${result.tuned === null ? 'while tuning the learning rates' : `after ${result.runs.length} of ${estimators.length * seeds.length} runs`}; nothing summarized: rlvr compare --out ${out} --resume (same options) continues\n`,
      );
      return 130;
    }
    if (values.json === true) {
      const { readFile } = await import('node:fs/promises');
      io.stdout.write(await readFile(result.file, 'utf8'));
      return 0;
    }
    const context = { steps: result.steps, seeds: result.seeds, runs: result.runs };
    if (result.tuned) io.stdout.write(formatTune(result.tuned) + '\n\n');
    io.stdout.write(formatCompare(result.table, decision === undefined ? context : { ...context, sequential: decision }) + '\n');
    io.stdout.write(`runs in ${out}/ESTIMATOR/seed-S (rlvr report on any of them); summary: ${result.file}\n`);
    return 0;
  },
};

/**
 * compare's evaluation unless the config says otherwise: 1024 held-out problems (x the config's 8 samples) before
 * the first step and after the last, none in between. One evaluation of 128 problems has an SD of about 1.3 points,
 * as large as the differences compared; 1024 brings it to about 0.45.
 */
function withCompareEval(config: Record<string, unknown>): Record<string, unknown> {
  const given = config.eval !== null && typeof config.eval === 'object' ? (config.eval as Record<string, unknown>) : {};
  return { ...config, eval: { problems: 1024, every: 0, ...given } };
}

/** `runs/compare-20261203-061500`: a new directory per comparison. */
function defaultOut(): string {
  return `runs/compare-${timestamp()}`;
}
