/**
 * `rlvr train`: argument parsing and terminal output. The loop itself is `runTrain` (run.ts).
 */
import { deepMerge, intFlag, parseWithOverrides, readConfigObject, stoppable, timestamp, usageError, workersFlag } from '@rlvr/core';
import type { Command } from '@rlvr/core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FLAGS, withPlugins, withStepsAndSeed } from '../command-input.js';
import { RUN_FILES } from '@rlvr/report';
import { headlineLines } from '@rlvr/report';
import { ReferenceTrainerError } from '../errors.js';
import { progressLine, stepLogger } from '@rlvr/core';
import type { TrainSummary } from './run.js';

const TRAIN_USAGE = `usage: rlvr train [options]

Run the RLVR loop: sample groups of completions with the policy, grade them (math-verify),
compute the signals the estimator needs, estimate per-token advantages, update the policy.
With no config this is the embedded default: the shipped warm-up checkpoint on synthetic
arithmetic, GRAIL advantages. Progress goes to stderr, the summary to stdout.

options:
  --config FILE       JSON config (keys: the @rlvr/reference-trainer README and schema/train.schema.json;
                      a run directory's config.json is one); the flags below override it
  --KEY.KEY VALUE     set one nested option, e.g. --trainer.schedule.lr 1e-5, --estimatorConfig.wMin 0.3,
                      --eval.greedy false (paths and values checked as in a config file)
  --estimator NAME    advantage estimator (grpo, dr-grpo, grail, oar-g, rloo, baseline+weighting, ...)
  --plugin FILE       a module that registers estimators (repeatable)
  --checkpoint DIR    the starting policy (default: the embedded warm-up checkpoint)
  --steps N           RL steps
  --checkpoint-every N  save a checkpoint every N steps (default 20; 0: only at the end and on Ctrl-C)
  --keep-checkpoints N  checkpoints kept (default 2; older ones are deleted, never for a damaged save)
  --seed N            data order, sampling and shuffling
  --backend NAME      tfjs backend: auto (default), tensorflow, webgpu, wasm, cpu; a --resume may change it
  --workers N|auto    policy worker threads of the update (default auto: one per available core;
                      1 runs everything in this thread); a --resume may change it
  --out DIR           run directory (default runs/ESTIMATOR-sSEED-TIME); a fresh run refuses one holding a metrics.jsonl
  --resume            continue the run in --out (required) from its latest intact checkpoint (SHA256SUMS
                      checked; a damaged one is passed over, saying so), with its own config.json; options
                      given again must agree with it (steps, checkpoint and sample cadence, backend,
                      workers and plugins may change: --steps 300 extends a run); a --out without a run is an error,
                      and so is one without a checkpoint whose logs record a step (nothing is erased)
  --report            write RUN_DIR/report.html when done (same as rlvr report RUN_DIR); a
                      --resume of a run that has one writes it again
  --json              print the summary as JSON
  -q, --quiet         no progress
  -h, --help          this help

Ctrl-C (or SIGTERM) stops after the current step and saves a checkpoint (a second signal exits at once).`;

/** `rlvr train` (and `rlvr-train`-style use from code through core's `runCommand`). */
export const trainCommand: Command = {
  summary: 'the RLVR loop (embedded default: warm-up checkpoint, synthetic arithmetic, GRAIL)',
  usage: TRAIN_USAGE,
  options: {
    ...CONFIG_FLAGS,
    estimator: { type: 'string', short: 'e' },
    plugin: { type: 'string', multiple: true },
    checkpoint: { type: 'string' },
    'checkpoint-every': { type: 'string' },
    'keep-checkpoints': { type: 'string' },
    seed: { type: 'string' },
    workers: { type: 'string' },
    backend: { type: 'string' },
    resume: { type: 'boolean' },
    report: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  graceful: true,
  dotted: true,
  async run({ values, io, signal, color, overrides = [] }) {
    if (values.resume === true && values.out === undefined) throw usageError('needs --out: the run directory to continue', '--resume');
    const configFile = values.config as string | undefined;
    let input = withStepsAndSeed(withPlugins(await readConfigObject(configFile), values.plugin as string[] | undefined), values);
    if (values.estimator !== undefined) input.estimator = values.estimator;
    if (values.checkpoint !== undefined) input.checkpoint = values.checkpoint;
    const checkpointEvery = intFlag(values, 'checkpoint-every', { min: 0 });
    if (checkpointEvery !== undefined) input.checkpointEvery = checkpointEvery;
    const keepCheckpoints = intFlag(values, 'keep-checkpoints', { min: 1, max: 1000 });
    if (keepCheckpoints !== undefined) input.keepCheckpoints = keepCheckpoints;
    const workers = workersFlag(values);
    if (workers !== undefined) input.workers = workers;
    if (values.backend !== undefined) input.backend = values.backend;
    // --resume continues the run's own config: what is given again lays over it (and must agree where it shapes the trajectory).
    const runConfig = values.resume === true ? join(values.out as string, RUN_FILES.config) : undefined;
    // a mistyped --out must not start hours of training from the defaults
    if (runConfig !== undefined && !existsSync(runConfig))
      throw new ReferenceTrainerError(
        'missing_file',
        `cannot resume: ${values.out as string} holds no run (no ${RUN_FILES.config}); check --out, or drop --resume to start a run there`,
        { field: '--out' },
      );
    if (runConfig !== undefined) input = deepMerge(await readConfigObject(runConfig), input);
    // Loaded only now: the schemas pull in tfjs, and usage errors should not wait for it.
    const [{ parseTrainConfig }, { configJsonSchemas }, { runTrain }] = await Promise.all([
      import('./config.js'),
      import('../config-schema.js'),
      import('./run.js'),
    ]);
    const config = parseWithOverrides((c) => parseTrainConfig(c, configFile ?? runConfig), input, overrides, configJsonSchemas().train);
    const out = (values.out as string | undefined) ?? defaultOut(config.estimator, config.seed);
    const logger = stepLogger('rlvr train', values.quiet === true, io.stderr, color, progressLine);
    // a run made with --report keeps its report current when resumed
    const withReport = values.report === true || (values.resume === true && existsSync(join(out, 'report.html')));
    // a signal before the first step, or between steps, ends the run at once; one during a step lets it finish and checkpoint
    const summary = await stoppable(
      signal,
      logger,
      (onStep) => runTrain(config, out, { resume: values.resume === true, logger, signal, onStep }),
      {
        idle: true,
      },
    );
    let report: string | undefined;
    if (withReport && !summary.interrupted) {
      const { writeReport } = await import('@rlvr/report');
      const r = await writeReport(out);
      report = r.path;
      for (const w of r.warnings) logger.warn(w);
    }
    if (values.json === true) io.stdout.write(JSON.stringify({ ...summary, ...(report === undefined ? {} : { report }) }) + '\n');
    else {
      io.stdout.write(formatSummary(summary) + '\n');
      if (report !== undefined) io.stdout.write(`report: ${report}\n`);
    }
    // Stopped by Ctrl-C: the checkpoint is saved, but the run is not done (130 = 128 + SIGINT).
    return summary.interrupted ? 130 : 0;
  },
};

/** `runs/grail-s0-20261203-061500`: a new directory per run, so repeating a command never collides. */
function defaultOut(estimator: string, seed: number): string {
  return `runs/${estimator.replace(/[^A-Za-z0-9_.+-]/g, '_')}-s${seed}-${timestamp()}`;
}

/** The human summary: held-out accuracy before and after, the time per step, where the run is. */
function formatSummary(s: TrainSummary): string {
  const first = s.evals[0];
  const last = s.evals.at(-1);
  const lines = [
    `rlvr train: ${s.interrupted ? 'stopped early' : 'done'}: ${s.estimator}, seed ${s.seed}, ${s.completedSteps}/${s.steps} steps, ${s.secondsPerStep.toFixed(2)} s/step, ${(s.wallSeconds / 60).toFixed(1)} min`,
  ];
  // the same headline as the report's summary (@rlvr/report)
  if (first !== undefined && last !== undefined && last !== first) lines.push(...headlineLines(s.evals));
  lines.push(
    s.interrupted
      ? `run directory: ${s.outDir} (continue with: rlvr train --out ${s.outDir} --resume, with the same config)`
      : `run directory: ${s.outDir} (rlvr report ${s.outDir}; final policy in ${s.modelDir})`,
  );
  return lines.join('\n');
}
