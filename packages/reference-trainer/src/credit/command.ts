/**
 * `rlvr credit`: argument parsing and terminal output. The run itself is `runCredit` (run.ts).
 */
import { intFlag, parseWithOverrides, readConfigObject, timestamp, usageError } from '@rlvr/core';
import type { Command } from '@rlvr/core';
import { chainProblems, configChainSource } from '@rlvr/tasks';
import { checkCheckpointTask, formatCreditTable, listFlag } from '@rlvr/report';
import { CONFIG_FLAGS, withPlugins, withStepsAndSeed } from '../command-input.js';

const CREDIT_USAGE = `usage: rlvr credit --estimators A,B,... [options]

Sample one batch from a checkpoint, compute every estimator's token advantages on it, label each
completion's first wrong line against its chain and score the credit maps against it (docs/credit.md).
Writes OUT/credit.json (every per-rollout value) and OUT/credit.html; prints a table.

options:
  --estimators LIST   estimators, comma-separated (grpo, grail, oar-g, a plugin's, ...)
  --checkpoint DIR    the policy (default: the embedded warm-up); one of rlvr pretrain/train must be of this task
  --family NAME       the synthetic task: arith (default) or long-chain
  --rollouts N        rollouts (default 256), rounded up to whole groups of rollout.groupSize
  --config FILE       a train config: its task or data, prompt, rollout, saliency, backend options
  --KEY.KEY VALUE     one nested option, e.g. --rollout.maxNewTokens 200
  --plugin FILE       a module that registers estimators (repeatable)
  --seed N            problems, sampling and bootstrap (default 0)
  --resamples N       bootstrap resamples (default 2000)
  --out DIR           output directory (default runs/credit-TIME); one holding a credit.json is refused
  --json              print the aggregates as JSON
  -q, --quiet         no progress
  -h, --help          this help`;

export const creditCommand: Command = {
  summary: 'score estimators\u2019 token credit against known first errors on one frozen batch',
  usage: CREDIT_USAGE,
  options: {
    config: CONFIG_FLAGS.config,
    out: CONFIG_FLAGS.out,
    quiet: CONFIG_FLAGS.quiet,
    estimators: { type: 'string', short: 'e' },
    checkpoint: { type: 'string' },
    family: { type: 'string' },
    rollouts: { type: 'string' },
    resamples: { type: 'string' },
    plugin: { type: 'string', multiple: true },
    seed: { type: 'string' },
    json: { type: 'boolean' },
  },
  dotted: true,
  async run({ values, io, overrides = [] }) {
    if (values.estimators === undefined) throw usageError('needs the estimators to compare, e.g. grpo,grail', '--estimators');
    const estimators = listFlag('--estimators', values.estimators as string);
    const rollouts = intFlag(values, 'rollouts', { min: 2, max: 1_000_000 }) ?? 256;
    const resamples = intFlag(values, 'resamples', { min: 100, max: 100_000 }) ?? 2000;
    const configFile = values.config as string | undefined;
    const input = withStepsAndSeed(withPlugins(await readConfigObject(configFile), values.plugin as string[] | undefined), values);
    if (values.checkpoint !== undefined) input.checkpoint = values.checkpoint;
    if (values.family !== undefined) input.family = values.family;
    const [{ parseTrainConfig }, { configJsonSchemas }, { loadPlugins }, { creditRun }] = await Promise.all([
      import('../train/config.js'),
      import('../config-schema.js'),
      import('../train/plugins.js'),
      import('@rlvr/eval'),
    ]);
    const c = parseWithOverrides((x) => parseTrainConfig(x, configFile), input, overrides, configJsonSchemas().train);
    await loadPlugins(c.plugins);
    checkCheckpointTask(c.checkpoint, c); // a checkpoint of another task is refused, naming both
    const problems = await chainProblems(configChainSource(c, c.seed), Math.ceil(rollouts / c.rollout.groupSize));
    const logger = { info: (m: string) => values.quiet === true || io.stderr.write(`rlvr credit: ${m}\n`), warn: () => undefined };
    const out = (values.out as string | undefined) ?? `runs/credit-${timestamp()}`;
    const t0 = performance.now();
    const report = await creditRun({ ...c, problems, estimators, out, resamples, logger });
    const seconds = (performance.now() - t0) / 1000;
    const { values: _perRollout, rollouts: _rollouts, ...aggregates } = report; // --json: the aggregates only
    const text = `${formatCreditTable(report)}\nwrote ${out}/credit.json and credit.html (${seconds.toFixed(1)} s)`;
    io.stdout.write(`${values.json === true ? JSON.stringify({ out, seconds, ...aggregates }) : text}\n`);
    return 0;
  },
};
