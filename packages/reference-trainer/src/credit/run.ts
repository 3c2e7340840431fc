/**
 * `rlvr credit`'s run: one frozen batch sampled from a checkpoint, every estimator's advantages on it (the signals
 * computed once, for the union of their needs), each completion labelled against its chain, then scored
 * (`@rlvr/report`'s `creditOfEstimates`). Everything is checked before the sampling, and nothing is written before
 * the scores exist.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { prepareEstimator } from '@rlvr/advantages';
import { FINISH_CODES, assertCreatable, createDirectory } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import { loadModel, loadTokenizer, parseModelConfig, selectBackend } from '@rlvr/policy';
import { creditOfEstimates, writeCreditJson, writeCreditPage } from '@rlvr/report';
import type { CreditReport } from '@rlvr/report';
import { checkPrompts, modelChatTemplate, plainChatTemplate, policySampler, promptBuilder, sampleGroups } from '@rlvr/rollout';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import { labelTokens, loadTasks, taskGenerator } from '@rlvr/tasks';
import type { Chain } from '@rlvr/tasks';
import { ReferenceTrainerError } from '../errors.js';
import type { TrainConfig } from '../train/config.js';
import { loadPlugins } from '../train/plugins.js';

export interface CreditRunOptions {
  estimators: readonly string[];
  /** rollouts wanted: rounded up to whole groups of `rollout.groupSize` */
  rollouts: number;
  out: string;
  resamples: number;
  logger: Logger;
}

/** Sample, estimate, label, score; write `credit.json` and `credit.html` into `out`. */
export async function runCredit(config: TrainConfig, o: CreditRunOptions): Promise<{ report: CreditReport; seconds: number }> {
  const t0 = performance.now();
  await loadPlugins(config.plugins);
  const estimators = o.estimators.map((name) => ({ name, prepared: prepareEstimator(name, {}) }));
  // one plan per estimator first, so that a signal no backend gives is named with the estimator that needs it
  const options = { temperature: config.trainer.temperature };
  for (const e of estimators) parseSignalConfig(config.saliency, e.prepared.needs, { ...options, estimator: e.name });
  const plan = parseSignalConfig(config.saliency, [...new Set(estimators.flatMap((e) => e.prepared.needs))], options);
  checkTask(config);
  for (const f of ['credit.json', 'credit.html'])
    if (existsSync(join(o.out, f)))
      throw new ReferenceTrainerError('invalid_options', `${join(o.out, f)} exists: pick another --out`, { field: '--out' });
  await assertCreatable(o.out);

  const G = config.rollout.groupSize;
  const problems = await chainProblems(config, Math.ceil(o.rollouts / G));
  const tokenizer = loadTokenizer(config.checkpoint);
  const context = parseModelConfig(JSON.parse(readFileSync(join(config.checkpoint, 'config.json'), 'utf8'))).max_position_embeddings;
  const prompts = promptBuilder(config.prompt, modelChatTemplate(config.checkpoint, tokenizer).apply ?? plainChatTemplate);
  const tasks = checkPrompts(problems, tokenizer, prompts, { context, maxNewTokens: config.rollout.maxNewTokens, field: 'rollout' });
  await selectBackend({ backend: config.backend }, o.logger);
  const model = loadModel(config.checkpoint);
  try {
    const sampler = policySampler(model, tokenizer, { batchSize: config.rollout.batchSize });
    const eosIds = [...sampler.eosTokenIds];
    const r = config.rollout;
    o.logger.info(`sampling ${problems.length} prompts x ${G} completions from ${config.checkpoint}`);
    const { batch, texts } = await sampleGroups(
      tasks.map((t) => ({ tokens: t.prompt, ...(t.reference && { reference: t.reference }) })),
      sampler,
      {
        groupSize: G,
        temperature: r.temperature,
        topP: r.topP,
        maxNewTokens: r.maxNewTokens,
        seed: config.seed,
        spans: { which: plan.box },
      },
    );
    const correct = texts.map((text, i) => {
      const p = problems[batch.groupIndex[i]!]!;
      return batch.finish[i] !== FINISH_CODES.error && mathReward(text, p.answer, { problem: p.question }).reward > 0;
    });
    correct.forEach((c, i) => (batch.rewards[i] = c ? 1 : 0));
    o.logger.info(`signals: ${plan.sources.map((s) => s.signal).join(', ') || '(none)'}; ${estimators.length} estimators`);
    const { signals } = await computeSignals(model, batch, plan, { padId: eosIds[0]!, tokenBudget: config.trainer.tokenBudget });
    const estimates = estimators.map(({ name, prepared }) => ({
      name,
      ...prepared.estimate(batch, signals),
      composed: 'weighting' in prepared.estimator,
    }));
    const offsets = batch.completionOffsets;
    const labels = texts.map((_, i) =>
      labelTokens(problems[batch.groupIndex[i]!]!.chain, batch.completionTokens.subarray(offsets[i]!, offsets[i + 1]!), tokenizer, {
        special: eosIds,
      }),
    );
    const baseline = prepareEstimator('grpo', {}).estimate(batch, signals).sequenceAdvantages;
    const input = { offsets, groupIndex: batch.groupIndex, correct, labels, estimates, baseline };
    const report = creditOfEstimates(input, { resamples: o.resamples, seed: config.seed });
    await createDirectory(o.out);
    await writeCreditJson(join(o.out, 'credit.json'), report);
    await writeCreditPage(join(o.out, 'credit.html'), report, { title: `credit maps: ${config.checkpoint}` });
    return { report, seconds: (performance.now() - t0) / 1000 };
  } finally {
    model.dispose();
  }
}

/** What a run config says about its problems: the data file, or the synthetic family. */
function taskOf(c: { data?: { train?: unknown }; family?: unknown }): string {
  return c.data?.train !== undefined ? `data ${String(c.data.train)}` : String(c.family ?? 'arith');
}

/**
 * A checkpoint that `rlvr pretrain` (DIR/checkpoint) or `rlvr train` (DIR/model) wrote has its run's config.json
 * one directory up, naming its task: one of another task than this run's is refused, naming both.
 */
function checkTask(config: TrainConfig): void {
  const file = join(dirname(config.checkpoint), 'config.json');
  if (!existsSync(file)) return;
  let run: { command?: unknown; family?: unknown; data?: { train?: unknown } };
  try {
    run = JSON.parse(readFileSync(file, 'utf8')) as typeof run;
  } catch {
    return; // not a run's config: nothing recorded
  }
  if (run.command !== 'pretrain' && run.command !== 'train') return;
  const [theirs, ours] = [taskOf(run), taskOf(config)];
  if (theirs !== ours)
    throw new ReferenceTrainerError(
      'invalid_config',
      `checkpoint ${config.checkpoint} was made on task ${theirs} (${file}), not on this run's task ${ours}: pass --family ${theirs} (or --config with its task)`,
      { field: 'checkpoint' },
    );
}

/** `count` problems with their chains: the synthetic family's first of stream `seed`, or a data file's first rows (each with a `chain`). */
async function chainProblems(
  config: TrainConfig,
  count: number,
): Promise<{ question: string; answer: string; solution?: string; chain: Chain }[]> {
  if (config.data === undefined) {
    const options = config.family === 'long-chain' ? config.longChain : config.task;
    return taskGenerator(config.family, options).tasks(config.seed, count);
  }
  const file = config.data.train;
  const rows = await loadTasks(file, config.data.format, count).catch((err: unknown) => {
    throw new ReferenceTrainerError(
      existsSync(file) ? 'invalid_record' : 'missing_file',
      (err as Error).message,
      { field: 'data.train' },
      { cause: err },
    );
  });
  if (rows.length < count)
    throw new ReferenceTrainerError('invalid_config', `${file} has ${rows.length} problems; ${count} are needed`, { field: 'data.train' });
  return rows.map((t) => {
    if (t.chain === undefined)
      throw new ReferenceTrainerError(
        'invalid_record',
        `${file}:${t.line}: no chain: the labeller needs each problem's chain (a \`chain\` field, mapped by data.format)`,
        {
          field: 'data.train',
        },
      );
    return { question: t.question, answer: t.answer, chain: t.chain, ...(t.solution === undefined ? {} : { solution: t.solution }) };
  });
}
