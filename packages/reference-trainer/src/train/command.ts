/**
 * `rlvr train`: argument parsing and terminal output. The loop itself is `runTrain` (run.ts).
 */
import { parseArgs } from 'node:util';
import { ReferenceTrainerError } from '../errors.js';
import { nonNegativeInt, readConfigObject, withPlugins } from '../command-input.js';
import { parseTrainConfig } from './config.js';
import { headlineLines } from '@rlvr/report';
import { progressLine } from './progress.js';
import { StatusLine, timestamp } from '../terminal.js';
import { runTrain } from './run.js';
import type { TrainLogger, TrainSummary } from './run.js';

export const TRAIN_USAGE = `usage: rlvr train [options]

Run the RLVR loop: sample groups of completions with the policy, grade them (math-verify),
compute the signals the estimator needs, estimate per-token advantages, update the policy.
With no config this is the embedded default: the shipped warm-up checkpoint on synthetic
arithmetic, GRAIL advantages. Progress goes to stderr, the summary to stdout.

options:
  --config FILE       JSON config (keys: the @rlvr/reference-trainer README); the flags below override it
  --estimator NAME    advantage estimator (grpo, dr-grpo, grail, oar-g, rloo, baseline+weighting, ...)
  --plugin FILE       a module that registers estimators (repeatable)
  --checkpoint DIR    the starting policy (default: the embedded warm-up checkpoint)
  --steps N           RL steps
  --seed N            data order, sampling and shuffling
  --out DIR           run directory (default runs/ESTIMATOR-sSEED-TIME); a fresh run refuses one holding a metrics.jsonl
  --resume            continue the run in --out (required) from its latest checkpoint
  --report            write RUN_DIR/report.html when done (same as rlvr report RUN_DIR)
  --json              print the summary as JSON
  -q, --quiet         no progress
  -h, --help          this help

Ctrl-C stops after the current step and saves a checkpoint (a second Ctrl-C exits at once).`;

export async function trainCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      estimator: { type: 'string', short: 'e' },
      plugin: { type: 'string', multiple: true },
      checkpoint: { type: 'string' },
      steps: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string', short: 'o' },
      resume: { type: 'boolean' },
      report: { type: 'boolean' },
      json: { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(TRAIN_USAGE + '\n');
    return;
  }
  const usage = (m: string) => new ReferenceTrainerError('invalid_options', m);
  if (positionals.length > 0) throw usage(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const input = withPlugins(await readConfigObject(values.config), values.plugin);
  if (values.steps !== undefined) input.steps = nonNegativeInt('steps', values.steps);
  if (values.seed !== undefined) input.seed = nonNegativeInt('seed', values.seed);
  if (values.estimator !== undefined) input.estimator = values.estimator;
  if (values.checkpoint !== undefined) input.checkpoint = values.checkpoint;
  const config = parseTrainConfig(input, values.config);

  if (values.resume && values.out === undefined) throw usage('--resume needs --out: the run directory to continue');
  const out = values.out ?? defaultOut(config.estimator, config.seed);
  const logger = terminalLogger(values.quiet === true);
  const abort = new AbortController();
  const onSigint = () => {
    if (abort.signal.aborted) process.exit(130);
    abort.abort();
    logger.info('stopping after this step (Ctrl-C again to exit now)');
  };
  process.on('SIGINT', onSigint);
  let summary: TrainSummary;
  try {
    summary = await runTrain(config, out, { resume: values.resume === true, logger, signal: abort.signal });
  } finally {
    process.off('SIGINT', onSigint);
    logger.done();
  }
  let report: string | undefined;
  if (values.report && !summary.interrupted) {
    const { writeReport } = await import('@rlvr/report');
    const r = await writeReport(out);
    report = r.path;
    for (const w of r.warnings) logger.warn?.(w);
  }
  // Stopped by Ctrl-C: the checkpoint is saved, but the run is not done (130 = 128 + SIGINT).
  if (summary.interrupted) process.exitCode = 130;
  if (values.json) {
    process.stdout.write(JSON.stringify({ ...summary, ...(report === undefined ? {} : { report }) }) + '\n');
    return;
  }
  process.stdout.write(formatSummary(summary) + '\n');
  if (report !== undefined) process.stdout.write(`report: ${report}\n`);
}

/** `runs/grail-s0-20261203-061500`: a new directory per run, so repeating a command never collides. */
function defaultOut(estimator: string, seed: number): string {
  return `runs/${estimator.replace(/[^A-Za-z0-9_.+-]/g, '_')}-s${seed}-${timestamp()}`;
}

/** The human summary: held-out accuracy before and after, the time per step, where the run is. */
export function formatSummary(s: TrainSummary): string {
  const first = s.evals[0];
  const last = s.evals.at(-1);
  const lines = [`rlvr train: ${s.interrupted ? 'stopped early' : 'done'}: ${s.estimator}, seed ${s.seed}, ${s.completedSteps}/${s.steps} steps, ${s.secondsPerStep.toFixed(2)} s/step, ${(s.wallSeconds / 60).toFixed(1)} min`];
  // the same headline as the report's summary (@rlvr/report)
  if (first !== undefined && last !== undefined && last !== first) lines.push(...headlineLines(s.evals));
  lines.push(s.interrupted ? `run directory: ${s.outDir} (continue with: rlvr train --out ${s.outDir} --resume, with the same config)` : `run directory: ${s.outDir} (rlvr report ${s.outDir}; final policy in ${s.modelDir})`);
  return lines.join('\n');
}

/** Progress on stderr: a live bar on a terminal, a line every five steps otherwise. */
function terminalLogger(quiet: boolean): TrainLogger & { done(): void } {
  const out = new StatusLine('rlvr train', quiet);
  return {
    info: (m) => out.line(m),
    warn: (m) => out.line(`warning: ${m}`),
    progress: (p) => out.status(progressLine(p), p.step === p.steps || p.step % 5 === 0),
    done: () => out.done(),
  };
}
