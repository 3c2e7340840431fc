/**
 * `rlvr compare`: argument parsing and terminal output. The runs and the statistics are
 * `runCompare` (run.ts) and `summarize` (stats.ts).
 */
import { StatusLine, applyOverrides, intFlag, readConfigObject, stoppable, timestamp, usageError, workersFlag } from '@rlvr/core';
import type { CliIo, Command } from '@rlvr/core';
import { CONFIG_FLAGS, withPlugins } from '../command-input.js';
import { progressLine } from '../train/progress.js';
import { formatCompare } from '@rlvr/report';
import type { CompareLogger } from './run.js';
import { COMPARE_FILE } from '@rlvr/report';
import type { Threshold } from '@rlvr/report';

/** GRAIL against the paper's baseline (`dr-grpo`: r - mean, no std division) with the std-normalised `grpo` beside it, and OAR-G. */
const DEFAULT_ESTIMATORS = ['dr-grpo', 'grpo', 'grail', 'oar-g'] as const;

const COMPARE_USAGE = `usage: rlvr compare [options]

Train each estimator on the same seeds (same problems in the same order, same sampling seeds)
and compare them: final held-out accuracy and pass@n (mean ± std over seeds), steps to reach an
accuracy threshold, time per step relative to the baseline, and whether each difference from
the baseline (dr-grpo, the GRAIL paper's; grpo beside it) is within the seed spread. Each run is a normal run directory (rlvr report works on it). Progress
goes to stderr, the table to stdout.

options:
  --estimators LIST   comma-separated estimator or variant names, one row each (default
                      ${DEFAULT_ESTIMATORS.join(',')}, then every variant of the config)
  --seeds N|LIST      N seeds counting up from the config's seed (default 3: 0,1,2), or a list such as 0,5,9
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
  --out DIR           OUT/ROW/seed-S run directories and OUT/${COMPARE_FILE} (default runs/compare-TIME)
  --resume            continue finished or partial runs in --out (required) instead of refusing them
  --json              print ${COMPARE_FILE}'s contents instead of the table
  -q, --quiet         no progress
  -h, --help          this help

Ctrl-C stops after the current step of the current run (checkpoint saved; --resume continues).`;

/** `rlvr compare`. */
export const compareCommand: Command = {
  summary: 'train estimators on the same seeds; accuracy ± std, pass@n, steps to threshold, time',
  usage: COMPARE_USAGE,
  options: {
    ...CONFIG_FLAGS,
    estimators: { type: 'string', short: 'e' },
    seeds: { type: 'string' },
    plugin: { type: 'string', multiple: true },
    threshold: { type: 'string' },
    baseline: { type: 'string' },
    workers: { type: 'string' },
    resume: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  graceful: true,
  dotted: true,
  async run({ values, io, signal, color, overrides = [] }) {
    const listed = values.estimators === undefined ? undefined : parseList('estimators', values.estimators as string);
    const steps = intFlag(values, 'steps', { min: 1 });
    const threshold = values.threshold === undefined ? undefined : parseThreshold(values.threshold as string);
    if (values.resume === true && values.out === undefined)
      throw usageError('needs --out: the comparison directory to continue', '--resume');
    const configFile = values.config as string | undefined;
    // Loaded only now: the schemas pull in tfjs, and usage errors should not wait for it.
    const schema = (await import('../config-schema.js')).configJsonSchemas().compare;
    const config = applyOverrides(
      withPlugins(await readConfigObject(configFile), values.plugin as string[] | undefined),
      overrides,
      schema,
    );
    const workers = workersFlag(values);
    if (workers !== undefined) config.workers = workers;
    const seeds = parseSeeds((values.seeds as string | undefined) ?? '3', config.seed);
    // default rows: the four built-in estimators, then every variant of the config
    const variants = config.variants !== null && typeof config.variants === 'object' ? Object.keys(config.variants) : [];
    const estimators = listed ?? [...DEFAULT_ESTIMATORS, ...variants.filter((v) => !(DEFAULT_ESTIMATORS as readonly string[]).includes(v))];
    const baseline = values.baseline as string | undefined;
    if (baseline !== undefined && !estimators.includes(baseline))
      throw usageError(`${JSON.stringify(baseline)} is not among the estimators (${estimators.join(', ')})`, '--baseline');

    const out = (values.out as string | undefined) ?? defaultOut();
    const logger = terminalLogger(values.quiet === true, io.stderr, color);
    const { runCompare } = await import('./run.js');
    const result = await stoppable(signal, logger, () =>
      runCompare(
        {
          estimators,
          seeds,
          config,
          out,
          resume: values.resume === true,
          ...(configFile === undefined ? {} : { configFile }),
          ...(steps === undefined ? {} : { steps }),
          ...(threshold === undefined ? {} : { threshold }),
          ...(baseline === undefined ? {} : { baseline }),
        },
        logger,
        signal,
      ),
    );
    if (result.interrupted || result.table === null || result.file === null) {
      io.stderr.write(
        `rlvr compare: stopped after ${result.runs.length} of ${estimators.length * seeds.length} runs; nothing summarized: rlvr compare --out ${out} --resume (same options) continues\n`,
      );
      return 130;
    }
    if (values.json === true) {
      const { readFile } = await import('node:fs/promises');
      io.stdout.write(await readFile(result.file, 'utf8'));
      return 0;
    }
    io.stdout.write(formatCompare(result.table, { steps: result.steps, seeds: result.seeds }) + '\n');
    io.stdout.write(`runs in ${out}/ESTIMATOR/seed-S (rlvr report on any of them); summary: ${result.file}\n`);
    return 0;
  },
};

/** `grpo, grail` -> ['grpo', 'grail']; empty items are an error. */
function parseList(flag: string, v: string): string[] {
  const items = v.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw usageError(`must be a comma-separated list of names (got ${JSON.stringify(v)})`, flag);
  const twice = items.find((x, i) => items.indexOf(x) !== i);
  if (twice !== undefined) throw usageError(`lists ${JSON.stringify(twice)} twice`, flag);
  return items;
}

/** A seed: an integer from 0 to 2^32 - 1. */
function seedValue(v: string): number {
  return intFlag({ seeds: v }, 'seeds', { min: 0, max: 0xffffffff })!;
}

/** `3` -> three seeds from the config's seed (default 0); `0,5,9` -> those seeds. */
function parseSeeds(v: string, configSeed: unknown): number[] {
  if (v.includes(',')) return parseList('seeds', v).map(seedValue);
  const count = intFlag({ seeds: v }, 'seeds', { min: 1, max: 1000 })!;
  const first = typeof configSeed === 'number' && Number.isInteger(configSeed) && configSeed >= 0 ? configSeed : 0;
  return Array.from({ length: count }, (_, i) => first + i);
}

/** `0.55` or `55%`: an accuracy; `+0.05` or `+5%`: a gain over the run's step-0 accuracy. */
function parseThreshold(v: string): Threshold {
  const m = /^(\+?)(\d+(?:\.\d*)?|\.\d+)(%?)$/.exec(v.trim());
  const x = m === null ? Number.NaN : Number(m[2]) / (m[3] === '%' ? 100 : 1);
  if (!(x >= 0 && x <= 1))
    throw usageError(
      `must be an accuracy (0.55 or 55%) or a gain over the starting accuracy (+0.05 or +5%) (got ${JSON.stringify(v)})`,
      'threshold',
    );
  return { kind: m![1] === '+' ? 'gain' : 'accuracy', value: x };
}

/** `runs/compare-20261203-061500`: a new directory per comparison. */
function defaultOut(): string {
  return `runs/compare-${timestamp()}`;
}

/** Progress on stderr: a live bar on a terminal, a line every five steps otherwise. */
function terminalLogger(quiet: boolean, stream: CliIo['stderr'], live: boolean): CompareLogger & { done(): void } {
  const out = new StatusLine(stream, 'rlvr compare', { live, quiet });
  return {
    info: (m) => out.line(m),
    warn: (m) => out.line(`warning: ${m}`),
    progress: (p) => out.status(`${p.run}/${p.runs} ${p.estimator} s${p.seed} ${progressLine(p)}`, p.step === p.steps || p.step % 5 === 0),
    done: () => out.done(),
  };
}
