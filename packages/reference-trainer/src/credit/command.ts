/**
 * `rlvr credit`: argument parsing and terminal output. The run itself is `runCredit` (run.ts).
 */
import { intFlag, parseWithOverrides, readConfigObject, timestamp, usageError } from '@rlvr/core';
import type { Command } from '@rlvr/core';
import { CONFIG_FLAGS, withPlugins, withStepsAndSeed } from '../command-input.js';

const CREDIT_USAGE = `usage: rlvr credit --estimators A,B,... [options]

Sample one frozen batch of rollouts from a checkpoint, compute every estimator's per-token advantages
on that same batch (the saliency signals once, for all of them), label each completion's first wrong
line against its problem's chain (@rlvr/tasks), and score each method's credit map against it:
error-line AUROC, excess |advantage| mass, profiles, 95% bootstrap CIs, paired differences (docs/credit.md).
Writes OUT/credit.json (every per-rollout value) and OUT/credit.html; prints a table.

options:
  --estimators LIST   estimators to compare, comma-separated (grpo, dr-grpo, grail, oar-g, a plugin's, ...)
  --checkpoint DIR    the policy (default: the embedded warm-up checkpoint); a checkpoint that rlvr pretrain
                      or rlvr train wrote must be of this run's task
  --rollouts N        rollouts to sample (default 256), rounded up to whole groups of rollout.groupSize
  --config FILE       a train config (its task, data, prompt, rollout and saliency options are used)
  --family NAME       the synthetic task: arith (default) or long-chain (problems and chains of @rlvr/tasks)
  --KEY.KEY VALUE     one nested option, e.g. --rollout.maxNewTokens 200, --longChain.maxSteps 6
  --plugin FILE       a module that registers estimators (repeatable)
  --seed N            the problems and the sampling (default 0); also the bootstrap's
  --resamples N       bootstrap resamples (default 2000)
  --out DIR           output directory (default runs/credit-TIME); refuses one holding a credit.json
  --json              print the report's aggregates (no per-rollout values) as JSON
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
    const estimators = String(values.estimators ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (estimators.length === 0) throw usageError('needs the estimators to compare, e.g. grpo,grail', '--estimators');
    if (new Set(estimators).size < estimators.length) throw usageError('lists an estimator twice', '--estimators');
    const rollouts = intFlag(values, 'rollouts', { min: 2, max: 1_000_000 }) ?? 256;
    const resamples = intFlag(values, 'resamples', { min: 100, max: 100_000 }) ?? 2000;
    const configFile = values.config as string | undefined;
    const input = withStepsAndSeed(withPlugins(await readConfigObject(configFile), values.plugin as string[] | undefined), values);
    if (values.checkpoint !== undefined) input.checkpoint = values.checkpoint;
    if (values.family !== undefined) input.family = values.family;
    const [{ parseTrainConfig }, { configJsonSchemas }, { runCredit }, { formatCreditTable }] = await Promise.all([
      import('../train/config.js'),
      import('../config-schema.js'),
      import('./run.js'),
      import('@rlvr/report'),
    ]);
    const config = parseWithOverrides((c) => parseTrainConfig(c, configFile), input, overrides, configJsonSchemas().train);
    const quiet = values.quiet === true;
    const say = (m: string) => quiet || io.stderr.write(`rlvr credit: ${m}\n`);
    const logger = { info: say, warn: (m: string) => io.stderr.write(`rlvr credit: warning: ${m}\n`) };
    const out = (values.out as string | undefined) ?? `runs/credit-${timestamp()}`;
    const { report, seconds } = await runCredit(config, { estimators, rollouts, out, resamples, logger });
    if (values.json === true) {
      const { values: _perRollout, rollouts: _rollouts, ...aggregates } = report;
      io.stdout.write(JSON.stringify({ out, seconds, ...aggregates }) + '\n');
    } else io.stdout.write(`${formatCreditTable(report)}\nwrote ${out}/credit.json and credit.html (${seconds.toFixed(1)} s)\n`);
    return 0;
  },
};
