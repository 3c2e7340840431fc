/**
 * The frozen-batch comparison of credit maps (issue 39; `rlvr credit`): one batch sampled from a checkpoint and
 * graded, every estimator's advantages on that same batch (the signals computed once, for the union of their
 * needs), each completion labelled against its problem's chain, scored with `@rlvr/report`'s credit metrics and
 * written as `credit.json` and `credit.html`. Shapes: B rollouts, T completion tokens.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareEstimator } from '@rlvr/advantages';
import { assertCreatable, createDirectory, silentLogger } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { gradeBatch } from '@rlvr/math-verify';
import { loadModel, loadTokenizer, parseModelConfig, selectBackend } from '@rlvr/policy';
import type { BackendName, Qwen3Model, Tokenizer } from '@rlvr/policy';
import { creditOfEstimates, writeCreditJson, writeCreditPage } from '@rlvr/report';
import type { CreditReport } from '@rlvr/report';
import { checkPrompts, modelChatTemplate, plainChatTemplate, policySampler, promptBuilder, sampleGroups } from '@rlvr/rollout';
import type { PromptOptionsInput, PromptTask } from '@rlvr/rollout';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import { chainProblems, labelTokens } from '@rlvr/tasks';
import type { ChainProblem, ChainSource } from '@rlvr/tasks';
import { EvaluationError } from './errors.js';

/** What `creditRun` reads; a train config of `rlvr train` (`@rlvr/reference-trainer`) has the same keys. */
export interface CreditRunOptions {
  /** the policy's model directory */
  checkpoint: string;
  /** the prompts (`@rlvr/tasks`' `chainProblems`), `rollout.groupSize` completions each; a `solution` is the reference of signals that read one (GAR) */
  problems: readonly ChainProblem[];
  /** registered estimators (plugins loaded by the caller), each with its default options */
  estimators: readonly string[];
  /** output directory: `credit.json` and `credit.html`; one holding either is refused */
  out: string;
  rollout: { groupSize: number; temperature: number; topP: number; maxNewTokens: number; batchSize: number };
  prompt?: PromptOptionsInput;
  /** the signal options by backend name, as `rlvr train`'s `saliency` (`box`, backend options) */
  saliency?: Record<string, unknown>;
  /** the policy temperature of the signals and the pass's token budget (default 1 and 8192) */
  trainer?: { temperature?: number; tokenBudget?: number };
  backend?: BackendName | 'auto';
  /** the sampling's and the bootstrap's seed */
  seed: number;
  /** bootstrap resamples (default 2000) */
  resamples?: number;
  title?: string;
  logger?: Logger;
}

/**
 * Sample, grade, estimate, label, score and write. Everything that can be checked (the estimators, the signals
 * each needs, the output directory, the prompts against the context) is checked before the sampling, and nothing
 * is written before the scores exist: a failure leaves no directory behind.
 */
export async function creditRun(o: CreditRunOptions): Promise<CreditReport> {
  const checked = await checkCredit(o);
  const tokenizer = loadTokenizer(o.checkpoint);
  const context = parseModelConfig(JSON.parse(readFileSync(join(o.checkpoint, 'config.json'), 'utf8'))).max_position_embeddings;
  const prompts = promptBuilder(o.prompt ?? {}, modelChatTemplate(o.checkpoint, tokenizer).apply ?? plainChatTemplate);
  const tasks = checkPrompts(o.problems, tokenizer, prompts, { context, maxNewTokens: o.rollout.maxNewTokens, field: 'rollout' });
  await selectBackend({ backend: o.backend ?? 'auto' }, o.logger);
  const model = loadModel(o.checkpoint);
  try {
    return await scoreCredit(model, tokenizer, tasks, o, checked);
  } finally {
    model.dispose();
  }
}

/**
 * `creditRun` with a policy already loaded (a training run's, at an evaluation): the same checks, batch and files.
 * `checkpoint` only names the policy in the page's title.
 */
export async function creditOfPolicy(model: Qwen3Model, tokenizer: Tokenizer, o: CreditRunOptions): Promise<CreditReport> {
  const checked = await checkCredit(o);
  const prompts = promptBuilder(o.prompt ?? {}, modelChatTemplate(o.checkpoint, tokenizer).apply ?? plainChatTemplate);
  const context = model.config.max_position_embeddings;
  const tasks = checkPrompts(o.problems, tokenizer, prompts, { context, maxNewTokens: o.rollout.maxNewTokens, field: 'rollout' });
  return scoreCredit(model, tokenizer, tasks, o, checked);
}

/** `eval.credit` of a training run (`rlvr train`): the problems, rollouts and estimators to score at each evaluation. */
export interface CreditAtStepOptions extends Omit<CreditRunOptions, 'problems' | 'out' | 'resamples' | 'title'> {
  /** where the problems come from (`@rlvr/tasks`' `configChainSource`): the same every time */
  source: ChainSource;
  /** rollouts, rounded up to whole groups of `rollout.groupSize` */
  rollouts: number;
  /** the run directory's `credit` folder: this step's files go to DIR/step-N */
  dir: string;
}

/**
 * `creditOfPolicy` at training step `step`, into `dir/step-N` (1000 bootstrap resamples). Returns the log line
 * (each estimator's wrong-line AUROC), or null where that step's `credit.json` exists: written before a resume.
 */
export async function creditAtStep(model: Qwen3Model, tokenizer: Tokenizer, step: number, o: CreditAtStepOptions): Promise<string | null> {
  const out = join(o.dir, `step-${step}`);
  if (existsSync(join(out, 'credit.json'))) return null;
  const problems = await chainProblems(o.source, Math.ceil(o.rollouts / o.rollout.groupSize));
  const r = await creditOfPolicy(model, tokenizer, { ...o, problems, out, resamples: 1000, title: `credit maps at step ${step}` });
  const auroc = (m: (typeof r.methods)[number]) => `${m.name} AUROC ${m.wrong.auroc.mean?.toFixed(3) ?? '-'} (${m.wrong.auroc.n})`;
  return `credit step ${step}: ${r.methods.map(auroc).join(', ')}`;
}

/** The estimators prepared and their signal plan, the output directory checked. */
async function checkCredit(o: CreditRunOptions) {
  const estimators = o.estimators.map((name) => ({ name, prepared: prepareEstimator(name, {}) }));
  // one plan per estimator first, so that a signal no backend gives is named with the estimator that needs it
  const signalOptions = { temperature: o.trainer?.temperature ?? 1 };
  for (const e of estimators) parseSignalConfig(o.saliency, e.prepared.needs, { ...signalOptions, estimator: e.name });
  const plan = parseSignalConfig(o.saliency, [...new Set(estimators.flatMap((e) => e.prepared.needs))], signalOptions);
  for (const f of ['credit.json', 'credit.html'])
    if (existsSync(join(o.out, f)))
      throw new EvaluationError('invalid_options', `${join(o.out, f)} exists: pick another --out`, { field: 'out' });
  await assertCreatable(o.out);
  return { estimators, plan };
}

async function scoreCredit(
  model: Qwen3Model,
  tokenizer: Tokenizer,
  tasks: readonly PromptTask[],
  o: CreditRunOptions,
  { estimators, plan }: Awaited<ReturnType<typeof checkCredit>>,
): Promise<CreditReport> {
  const logger = o.logger ?? silentLogger;
  const s = o.rollout;
  const sampler = policySampler(model, tokenizer, { batchSize: s.batchSize });
  const eosIds = [...sampler.eosTokenIds];
  logger.info(`sampling ${o.problems.length} prompts x ${s.groupSize} completions from ${o.checkpoint}`);
  const { batch, texts } = await sampleGroups(
    tasks.map((t) => ({ tokens: t.prompt, ...(t.reference && { reference: t.reference }) })),
    sampler,
    {
      groupSize: s.groupSize,
      temperature: s.temperature,
      topP: s.topP,
      maxNewTokens: s.maxNewTokens,
      seed: o.seed,
      spans: { which: plan.box },
    },
  );
  const problemOf = (i: number) => o.problems[batch.groupIndex[i]!]!;
  gradeBatch(batch, texts, o.problems); // as a training step grades
  const correct = Array.from(batch.rewards, (r) => r > 0);
  correct.forEach((c, i) => (batch.rewards[i] = c ? 1 : 0));
  logger.info(`signals: ${plan.sources.map((x) => x.signal).join(', ') || '(none)'}; ${estimators.length} estimators`);
  const pass = { padId: eosIds[0]!, tokenBudget: o.trainer?.tokenBudget ?? 8192 };
  const { signals } = await computeSignals(model, batch, plan, pass);
  // a composed estimator (baseline + weighting) is measured by its weights; GRPO's sequence advantages serve a method reporting none
  const estimates = estimators.map(({ name, prepared }) => ({
    name,
    ...prepared.estimate(batch, signals),
    composed: 'weighting' in prepared.estimator,
  }));
  const offsets = batch.completionOffsets;
  const labels = texts.map((_, i) =>
    labelTokens(problemOf(i).chain, batch.completionTokens.subarray(offsets[i]!, offsets[i + 1]!), tokenizer, { special: eosIds }),
  );
  const baseline = prepareEstimator('grpo', {}).estimate(batch, signals).sequenceAdvantages;
  const report = creditOfEstimates(
    { offsets, groupIndex: batch.groupIndex, correct, labels, estimates, baseline },
    { resamples: o.resamples ?? 2000, seed: o.seed },
  );
  await createDirectory(o.out);
  await writeCreditJson(join(o.out, 'credit.json'), report);
  await writeCreditPage(join(o.out, 'credit.html'), report, { title: o.title ?? `credit maps: ${o.checkpoint}` });
  return report;
}
