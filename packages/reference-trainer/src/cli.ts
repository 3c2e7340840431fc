#!/usr/bin/env node
/**
 * `rlvr`: the reference trainer's command line. Library code returns results
 * and warnings; only this file prints. Errors are one line on stderr with a
 * non-zero exit code: 2 for usage errors, 1 for everything else.
 */
import { parseArgs } from 'node:util';
import { ReferenceTrainerError } from './errors.js';

const USAGE = `usage: rlvr <command> [options]

commands:
  train [--config FILE]         the RLVR loop (embedded default: warm-up checkpoint, synthetic arithmetic, GRAIL)
  compare [--estimators LIST]   train estimators on the same seeds; accuracy ± std, pass@n, steps to threshold, time
  eval --model DIR --dataset F  n samples per problem: mean accuracy, pass@1, pass@n (or --endpoint URL; @rlvr/eval)
  pretrain [--config FILE]      supervised warm-up of a tiny policy on synthetic worked solutions
  report RUN_DIR [--out FILE]   write a self-contained HTML report of a run directory (@rlvr/report)
  verify ...                    grade answers: runs rlvr-verify (@rlvr/math-verify) with the same arguments
  advantages ...                per-token advantages from rollout JSONL: runs rlvr-advantages (@rlvr/advantages)

run 'rlvr <command> --help' for the options of a command`;

const PRETRAIN_USAGE = `usage: rlvr pretrain [options]

Train a tiny Qwen3 policy from scratch on synthetic arithmetic problems with worked
solutions (cross-entropy on the completion tokens), evaluate greedy accuracy on held-out
problems, and write a run directory with a checkpoint (safetensors, config.json,
tokenizer.pruned.json). Progress goes to stderr; the summary (JSON) to stdout.

options:
  --config FILE   JSON config (see the README); flags below override it
  --steps N       optimizer steps
  --seed N        model initialisation and training-problem stream
  --out DIR       run directory (default runs/pretrain); must not hold a metrics.jsonl
  -q, --quiet     no progress lines
  -h, --help      this help`;

class UsageError extends Error {}

async function pretrain(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      steps: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string', short: 'o' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(PRETRAIN_USAGE + '\n');
    return;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const { parsePretrainConfig } = await import('./pretrain/config.js');
  const { nonNegativeInt, readConfigObject } = await import('./command-input.js');
  const input = await readConfigObject(values.config);
  if (values.steps !== undefined) input.steps = nonNegativeInt('steps', values.steps);
  if (values.seed !== undefined) input.seed = nonNegativeInt('seed', values.seed);
  const config = parsePretrainConfig(input, values.config);
  const { runPretrain } = await import('./pretrain/run.js');
  const log = values.quiet ? () => {} : (m: string) => process.stderr.write(`rlvr pretrain: ${oneLine(m)}\n`);
  const summary = await runPretrain(config, values.out ?? 'runs/pretrain', { info: log, warn: log });
  const { evals, ...rest } = summary;
  process.stdout.write(JSON.stringify({ ...rest, evals: evals.map(({ examples: _examples, ...e }) => e) }) + '\n');
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help') {
    (command === undefined ? process.stderr : process.stdout).write(USAGE + '\n');
    return command === undefined ? 2 : 0;
  }
  if (command === 'verify' || command === 'advantages') {
    const { runDelegate } = await import('./delegate.js');
    return runDelegate(command, rest);
  }
  if (command === 'eval') {
    const { runCommand } = await import('@rlvr/core');
    const { evalCommand } = await import('@rlvr/eval/command');
    return runCommand('rlvr eval', evalCommand, rest, { stdout: process.stdout, stderr: process.stderr });
  }
  if (command === 'report') {
    const { runCommand } = await import('@rlvr/core');
    const { reportCommand } = await import('@rlvr/report');
    return runCommand('rlvr report', reportCommand, rest, { stdout: process.stdout, stderr: process.stderr });
  }
  try {
    if (command === 'train') await (await import('./train/command.js')).trainCommand(rest);
    else if (command === 'pretrain') await pretrain(rest);
    else if (command === 'compare') await (await import('./compare/command.js')).compareCommand(rest);
    else throw new UsageError(`unknown command ${JSON.stringify(command)} (available: train, eval, compare, pretrain, report, verify, advantages)`);
    // a command may set its own (rlvr train stopped by Ctrl-C: 130)
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    const usage = err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') === true;
    const invalidOptions = err instanceof ReferenceTrainerError && (err.code === 'invalid_options' || err.code === 'invalid_config');
    process.stderr.write(`rlvr ${command}: ${oneLine((err as Error).message)}\n`);
    return usage || invalidOptions ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
