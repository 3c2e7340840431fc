/**
 * `rlvr compare`: argument parsing and terminal output. The runs and the statistics are
 * `runCompare` (run.ts) and `summarize` (stats.ts).
 */
import { parseArgs } from 'node:util';
import { ReferenceTrainerError } from '../errors.js';
import { nonNegativeInt, readConfigObject, withPlugins } from '../command-input.js';
import { progressLine } from '../train/progress.js';
import { StatusLine, timestamp } from '../terminal.js';
import { formatCompare } from './format.js';
import { COMPARE_FILE } from './run.js';
import type { CompareLogger } from './run.js';
import type { Threshold } from './stats.js';

export const DEFAULT_ESTIMATORS = ['grpo', 'dr-grpo', 'grail', 'oar-g'] as const;

export const COMPARE_USAGE = `usage: rlvr compare [options]

Train each estimator on the same seeds (same problems in the same order, same sampling seeds)
and compare them: final held-out accuracy and pass@n (mean ± std over seeds), steps to reach an
accuracy threshold, time per step relative to grpo, and whether each difference from grpo is
within the seed spread. Each run is a normal run directory (rlvr report works on it). Progress
goes to stderr, the table to stdout.

options:
  --estimators LIST   comma-separated estimator names (default ${DEFAULT_ESTIMATORS.join(',')})
  --seeds N|LIST      N seeds counting up from the config's seed (default 3: 0,1,2), or a list such as 0,5,9
  --steps N           RL steps of every run (overrides the config)
  --config FILE       a rlvr train config (see docs/compare.md); estimator and seed are set per run
  --plugin FILE       a module that registers estimators (repeatable)
  --threshold X       "steps to": an accuracy (0.55 or 55%) or a gain over each run's start (+0.05 or +5%; default +5%)
  --baseline NAME     the estimator others are compared with (default grpo, else the first)
  --out DIR           OUT/ESTIMATOR/seed-S run directories and OUT/${COMPARE_FILE} (default runs/compare-TIME)
  --resume            continue finished or partial runs in --out (required) instead of refusing them
  --json              print ${COMPARE_FILE}'s contents instead of the table
  -q, --quiet         no progress
  -h, --help          this help

Ctrl-C stops after the current step of the current run (checkpoint saved; --resume continues).`;

export async function compareCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      estimators: { type: 'string', short: 'e' },
      seeds: { type: 'string' },
      steps: { type: 'string' },
      config: { type: 'string', short: 'c' },
      plugin: { type: 'string', multiple: true },
      threshold: { type: 'string' },
      baseline: { type: 'string' },
      out: { type: 'string', short: 'o' },
      resume: { type: 'boolean' },
      json: { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(COMPARE_USAGE + '\n');
    return;
  }
  const usage = (m: string) => new ReferenceTrainerError('invalid_options', m);
  if (positionals.length > 0) throw usage(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const estimators = parseList('estimators', values.estimators ?? DEFAULT_ESTIMATORS.join(','));
  const steps = values.steps === undefined ? undefined : int('steps', values.steps);
  if (steps === 0) throw usage('--steps must be at least 1');
  const threshold = values.threshold === undefined ? undefined : parseThreshold(values.threshold);
  if (values.resume && values.out === undefined) throw usage('--resume needs --out: the comparison directory to continue');

  const config = withPlugins(await readConfigObject(values.config), values.plugin);
  const seeds = parseSeeds(values.seeds ?? '3', config.seed);

  const out = values.out ?? defaultOut();
  const logger = terminalLogger(values.quiet === true);
  const abort = new AbortController();
  const onSigint = () => {
    if (abort.signal.aborted) process.exit(130);
    abort.abort();
    logger.info('stopping after this step (Ctrl-C again to exit now)');
  };
  // Imported only now: usage errors should not wait for tfjs.
  const { runCompare } = await import('./run.js');
  process.on('SIGINT', onSigint);
  let result;
  try {
    result = await runCompare(
      {
        estimators,
        seeds,
        config,
        out,
        resume: values.resume === true,
        ...(values.config === undefined ? {} : { configFile: values.config }),
        ...(steps === undefined ? {} : { steps }),
        ...(threshold === undefined ? {} : { threshold }),
        ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
      },
      logger,
      abort.signal,
    );
  } finally {
    process.off('SIGINT', onSigint);
    logger.done();
  }
  if (result.interrupted || result.table === null || result.file === null) {
    process.stderr.write(`rlvr compare: stopped after ${result.runs.length} of ${estimators.length * seeds.length} runs; nothing summarized: rlvr compare --out ${out} --resume (same options) continues\n`);
    return;
  }
  if (values.json) {
    const { readFile } = await import('node:fs/promises');
    process.stdout.write(await readFile(result.file, 'utf8'));
    return;
  }
  process.stdout.write(formatCompare(result.table, { steps: result.steps, seeds: result.seeds }) + '\n');
  process.stdout.write(`runs in ${out}/ESTIMATOR/seed-S (rlvr report on any of them); summary: ${result.file}\n`);
}

const int = nonNegativeInt;

/** `grpo, grail` -> ['grpo', 'grail']; empty items are an error. */
function parseList(flag: string, v: string): string[] {
  const items = v.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new ReferenceTrainerError('invalid_options', `--${flag} must be a comma-separated list of names, got ${JSON.stringify(v)}`);
  return items;
}

/** `3` -> three seeds from the config's seed (default 0); `0,5,9` -> those seeds. */
export function parseSeeds(v: string, configSeed: unknown): number[] {
  if (v.includes(',')) return parseList('seeds', v).map((s) => int('seeds', s));
  const count = int('seeds', v);
  if (count === 0) throw new ReferenceTrainerError('invalid_options', '--seeds must be at least 1');
  const first = typeof configSeed === 'number' && Number.isInteger(configSeed) && configSeed >= 0 ? configSeed : 0;
  return Array.from({ length: count }, (_, i) => first + i);
}

/** `0.55` or `55%`: an accuracy; `+0.05` or `+5%`: a gain over the run's step-0 accuracy. */
export function parseThreshold(v: string): Threshold {
  const m = /^(\+?)(\d+(?:\.\d*)?|\.\d+)(%?)$/.exec(v.trim());
  const x = m === null ? Number.NaN : Number(m[2]) / (m[3] === '%' ? 100 : 1);
  if (!(x >= 0 && x <= 1)) throw new ReferenceTrainerError('invalid_options', `--threshold must be an accuracy (0.55 or 55%) or a gain over the starting accuracy (+0.05 or +5%), got ${JSON.stringify(v)}`);
  return { kind: m![1] === '+' ? 'gain' : 'accuracy', value: x };
}

/** `runs/compare-20261203-061500`: a new directory per comparison. */
function defaultOut(): string {
  return `runs/compare-${timestamp()}`;
}

/** Progress on stderr: a live bar on a terminal, a line every five steps otherwise. */
function terminalLogger(quiet: boolean): CompareLogger & { done(): void } {
  const out = new StatusLine('rlvr compare', quiet);
  return {
    info: (m) => out.line(m),
    warn: (m) => out.line(`warning: ${m}`),
    progress: (p) => out.status(`${p.run}/${p.runs} ${p.estimator} s${p.seed} ${progressLine(p)}`, p.step === p.steps || p.step % 5 === 0),
    done: () => out.done(),
  };
}
