/**
 * `rlvr pretrain`: argument parsing and output. The training itself is `runPretrain` (run.ts).
 */
import { readConfigObject, streamLogger } from '@rlvr/core';
import type { Command } from '@rlvr/core';
import { CONFIG_FLAGS, withStepsAndSeed } from '../command-input.js';

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

/** `rlvr pretrain`. */
export const pretrainCommand: Command = {
  summary: 'supervised warm-up of a tiny policy on synthetic worked solutions',
  usage: PRETRAIN_USAGE,
  options: { ...CONFIG_FLAGS, seed: { type: 'string' } },
  async run({ values, io }) {
    const configFile = values.config as string | undefined;
    // Loaded only now: tfjs takes a moment to import, usage errors should not wait for it.
    const [{ parsePretrainConfig }, { runPretrain }] = await Promise.all([import('./config.js'), import('./run.js')]);
    const config = parsePretrainConfig(withStepsAndSeed(await readConfigObject(configFile), values), configFile);
    const log = streamLogger(io.stderr, 'rlvr pretrain');
    const quiet = { info() {}, warn() {} };
    const summary = await runPretrain(config, (values.out as string | undefined) ?? 'runs/pretrain', values.quiet === true ? quiet : log);
    const { evals, ...rest } = summary;
    io.stdout.write(JSON.stringify({ ...rest, evals: evals.map(({ examples: _examples, ...e }) => e) }) + '\n');
  },
};
