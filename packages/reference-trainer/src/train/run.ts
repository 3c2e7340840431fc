import { existsSync } from 'node:fs';
import { appendFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareEstimator } from '@rlvr/advantages';
import type { PreparedEstimator } from '@rlvr/advantages';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { modelChatTemplate, plainChatTemplate, policySampler, promptBuilder } from '@rlvr/rollout';
import type { PromptBuilder } from '@rlvr/rollout';
import { parseSignalConfig } from '@rlvr/saliency';
import { CheckpointStore, Trainer } from '@rlvr/trainer';
import { writeFileAtomic } from '../atomic-write.js';
import { ReferenceTrainerError } from '../errors.js';
import { RUN_FILES } from '@rlvr/report';
import { percent } from '../text-table.js';
import type { TrainConfig } from './config.js';
import { heldOutEval } from '@rlvr/eval';
import type { HeldOutResult } from '@rlvr/eval';
import { loadPlugins } from './plugins.js';
import { loadProblems } from './problems.js';
import { assertCreatable, exportModel, mkdirReason, truncateJsonl } from './run-files.js';
import { rlStep, sampleRecords } from './step.js';
import { toPromptTasks } from './tasks.js';

/** Where progress goes: the CLI prints it; library code never does. */
export interface TrainLogger {
  info(message: string): void;
  warn?(message: string): void;
  /** after every step (and after the step-0 evaluation, with step 0) */
  progress?(p: TrainProgress): void;
}

export interface TrainProgress {
  step: number;
  steps: number;
  /** mean reward of this step's rollouts (NaN at step 0) */
  reward: number;
  /** the latest held-out accuracy */
  accuracy: number;
  /** mean wall seconds of the training steps so far (this process) */
  secondsPerStep: number;
}

/** One held-out evaluation. */
export interface TrainEval {
  step: number;
  /** mean over problems of correct / n */
  accuracy: number;
  passAtN: number;
  n: number;
  problems: number;
  greedyAccuracy?: number;
  /** [problems] correct samples (of n) per held-out problem, in the held-out order */
  correct: number[];
  /** [problems] 1 where the greedy completion is correct */
  greedyCorrect?: number[];
}

export interface TrainSummary {
  outDir: string;
  estimator: string;
  seed: number;
  steps: number;
  /** step 0 (the starting checkpoint) first, then every `eval.every` steps and the last step */
  evals: TrainEval[];
  /** median wall seconds of a training step (sample, verify, signals, advantages, update), evaluation excluded; the median keeps a process's slow first step out */
  secondsPerStep: number;
  /** wall seconds of this process's run, evaluation included */
  wallSeconds: number;
  /** the trained policy as a model directory (config.json, model.safetensors, tokenizer) */
  modelDir: string;
  /** the step this process resumed from (0 for a fresh run) */
  resumedFrom: number;
  /** true when `signal` stopped the run early (after saving a checkpoint) */
  interrupted: boolean;
  /** steps the run has done (`steps` unless interrupted) */
  completedSteps: number;
}

/** Sub-directories of a train run directory (beside config.json, metrics.jsonl, samples.jsonl). */
export const TRAIN_DIRS = { checkpoints: 'checkpoints', model: 'model' } as const;
/** `evals.jsonl`: one `TrainEval` per held-out evaluation, with per-problem counts (for paired comparisons). */
export const TRAIN_FILES = { evals: 'evals.jsonl' } as const;


/**
 * The config a checkpoint must match to be resumed: everything that shapes the trajectory.
 * `steps` (to extend a run), checkpoint and sample cadence, the backend and plugin paths may change.
 */
export function resumeKey(config: TrainConfig): Record<string, unknown> {
  const { steps: _s, checkpointEvery: _c, keepCheckpoints: _k, sampleEvery: _e, samples: _n, backend: _b, plugins: _p, ...rest } = config;
  return rest;
}

/**
 * The RLVR loop on the synthetic arithmetic task: sample P x G completions with the policy,
 * grade them with `mathReward`, compute the signals the estimator needs (GRAIL: the fused
 * log-prob + grad x embedding pass), estimate per-token advantages, one `Trainer.step`.
 * Held-out evaluation before the first step, every `eval.every` steps and after the last.
 * Writes the run directory:
 *
 * ```
 * OUT/config.json        the resolved config
 * OUT/metrics.jsonl      per step: reward, loss, KL, entropy, clip fractions, weights by outcome, timings;
 *                        accuracy, pass@n, accuracy/greedy on eval steps (step 0 = the starting checkpoint)
 * OUT/samples.jsonl      some rollouts every `sampleEvery` steps, with their token weights (for the report)
 * OUT/evals.jsonl        every held-out evaluation with per-problem correct counts
 * OUT/checkpoints/       step-NNNNNN/ (weights, optimizer, RNG and data cursor) for `resume`
 * OUT/model/             the final policy, loadable by `loadModel` / `rlvr eval --model`
 * ```
 *
 * Everything is checked before anything is written: plugins, the estimator and its options,
 * the signals it needs, the checkpoint, the output directory. A fresh run refuses an OUT that
 * holds a metrics.jsonl; `resume` continues from the latest checkpoint (records after it are
 * dropped) and gives the same numbers as an uninterrupted run on the same backend.
 */
export async function runTrain(config: TrainConfig, outDir: string, options: { resume?: boolean; logger?: TrainLogger; signal?: AbortSignal } = {}): Promise<TrainSummary> {
  const logger = options.logger ?? { info() {} };
  const t0 = performance.now();
  await loadPlugins(config.plugins);
  const estimator = prepare(config);
  parseSignalConfig(config.saliency, estimator.needs, { temperature: config.trainer.temperature, estimator: config.estimator });
  if (!existsSync(join(config.checkpoint, 'config.json'))) {
    throw new ReferenceTrainerError('missing_file', `checkpoint ${config.checkpoint} not found (no config.json there)`, { file: config.checkpoint, field: 'checkpoint' });
  }
  const metricsFile = join(outDir, RUN_FILES.metrics);
  const samplesFile = join(outDir, RUN_FILES.samples);
  const store = new CheckpointStore(join(outDir, TRAIN_DIRS.checkpoints), config.keepCheckpoints);
  const problems = await loadProblems(config);
  await assertCreatable(outDir);
  const latest = options.resume ? await store.latest() : null;
  // Refuse a checkpoint of another trajectory before loading anything (the differing fields are named).
  if (latest !== null) await store.load(latest, resumeKey(config)).catch(cannotResume);
  if (!options.resume && existsSync(metricsFile)) {
    throw new ReferenceTrainerError('invalid_options', `${metricsFile} exists: pick another --out or pass --resume (a run directory is never overwritten)`, { file: outDir });
  }

  const backend = await selectBackend({ backend: config.backend }, logger);
  let model: Qwen3Model;
  let tokenizer: Tokenizer;
  try {
    model = loadModel(config.checkpoint);
    tokenizer = loadTokenizer(config.checkpoint);
  } catch (err) {
    throw new ReferenceTrainerError('read_failed', `cannot load the checkpoint: ${(err as Error).message}`, { file: config.checkpoint, field: 'checkpoint' }, { cause: err });
  }
  // Completions end at the config's eos_token_id(s) and the tokenizer's <|im_end|> / <|endoftext|> (the sampler's rule, as in rlvr-serve and rlvr eval).
  const sampler = policySampler(model, tokenizer, { batchSize: config.rollout.batchSize });
  const eosIds = [...sampler.eosTokenIds];
  const eosId = eosIds[0];
  if (eosId === undefined) {
    model.dispose();
    throw new ReferenceTrainerError('invalid_config', 'the checkpoint has no end-of-sequence token (no eos_token_id in config.json, no <|im_end|> or <|endoftext|> in the tokenizer): completions could not end', { file: join(config.checkpoint, 'config.json'), field: 'eos_token_id' });
  }
  // Only now, with everything checked and loaded, does the run directory appear.
  try {
    await mkdir(outDir, { recursive: true });
  } catch (err) {
    model.dispose();
    throw new ReferenceTrainerError('write_failed', `cannot create the output directory ${outDir}: ${mkdirReason(err)}`, { file: outDir }, { cause: err });
  }
  await writeFileAtomic(join(outDir, RUN_FILES.config), JSON.stringify({ command: 'train', ...config }, null, 2) + '\n');
  const trainer = new Trainer(model, config.trainer, { padId: eosId });
  try {
    const template = modelChatTemplate(config.checkpoint, tokenizer);
    const prompts: PromptBuilder = promptBuilder(config.prompt, template.apply ?? plainChatTemplate);
    const evalTasks = toPromptTasks(problems.heldOut, tokenizer, prompts);
    const stream = problems.stream;
    logger.info(`policy: ${config.checkpoint} (${model.numParameters().toLocaleString('en')} parameters, backend ${String(backend)}); estimator ${config.estimator}; ${config.rollout.prompts} prompts x ${config.rollout.groupSize} completions per step`);

    let start = 0;
    let evals: TrainEval[] = [];
    let stepSeconds: number[] = [];
    if (latest !== null) {
      const state = await trainer.restore(store, latest, resumeKey(config)).catch(cannotResume);
      start = state.step as number;
      stream.cursor = state.cursor as number;
      evals = state.evals as TrainEval[];
      stepSeconds = state.stepSeconds as number[];
      await truncateJsonl(metricsFile, start);
      await truncateJsonl(samplesFile, start);
      await truncateJsonl(join(outDir, TRAIN_FILES.evals), start);
      logger.info(`resumed from ${latest} (step ${start})`);
    } else {
      // A --resume of a run that died before its first checkpoint starts over.
      await rm(metricsFile, { force: true });
      await rm(samplesFile, { force: true });
      await rm(join(outDir, TRAIN_FILES.evals), { force: true });
    }
    if (start >= config.steps && evals.some((e) => e.step === start)) logger.info(`nothing to do: the run already has ${start} steps`);

    const evaluate = async (step: number): Promise<HeldOutResult> => {
      const e = await heldOutEval(model, tokenizer, evalTasks, { ...config.eval, seed: config.seed, eosIds });
      const record: TrainEval = { step, accuracy: e.accuracy, passAtN: e.passAtN, n: e.n, problems: e.problems, correct: e.correct };
      if (e.greedyAccuracy !== undefined) Object.assign(record, { greedyAccuracy: e.greedyAccuracy, greedyCorrect: e.greedyCorrect });
      evals.push(record);
      await appendFile(join(outDir, TRAIN_FILES.evals), JSON.stringify(record) + '\n');
      const greedy = e.greedyAccuracy === undefined ? '' : `, greedy ${percent(e.greedyAccuracy)}`;
      logger.info(`eval step ${step}: accuracy ${percent(e.accuracy)} (mean of ${e.n} samples at T=${config.eval.temperature}), pass@${e.n} ${percent(e.passAtN)}${greedy} on ${e.problems} held-out problems`);
      return e;
    };
    const evalMetrics = (e: HeldOutResult): Record<string, number> => ({
      accuracy: e.accuracy,
      [`pass@${e.n}`]: e.passAtN,
      ...(e.greedyAccuracy === undefined ? {} : { 'accuracy/greedy': e.greedyAccuracy }),
      'eval/mean_tokens': e.meanTokens,
      'eval/truncated': e.truncated,
    });
    const progress = (step: number, reward: number) => logger.progress?.({ step, steps: config.steps, reward, accuracy: evals.at(-1)?.accuracy ?? Number.NaN, secondsPerStep: mean(stepSeconds) });

    if (start === 0) {
      const e = await evaluate(0);
      await appendFile(metricsFile, JSON.stringify({ step: 0, ...evalMetrics(e) }) + '\n');
      progress(0, Number.NaN);
    }
    let interrupted = false;
    let completedSteps = start;
    for (let step = start + 1; step <= config.steps; step++) {
      const s0 = performance.now();
      const tasks = toPromptTasks(stream.next(config.rollout.prompts), tokenizer, prompts);
      const out = await rlStep(config, estimator, trainer, sampler, tasks, step, eosId);
      const seconds = (performance.now() - s0) / 1000;
      stepSeconds.push(seconds);
      const record: Record<string, number | null> = { step, ...out.metrics, 'time/step_s': seconds };
      const last = step === config.steps;
      if (last || (config.eval.every > 0 && step % config.eval.every === 0)) Object.assign(record, evalMetrics(await evaluate(step)));
      await appendFile(metricsFile, JSON.stringify(record) + '\n');
      if (config.sampleEvery > 0 && config.samples > 0 && (step === 1 || step % config.sampleEvery === 0 || last)) {
        const lines = sampleRecords(step, out.batch, out.adv, tasks, tokenizer, config.rollout.groupSize, config.samples);
        await appendFile(samplesFile, lines.map((l) => JSON.stringify(l) + '\n').join(''));
      }
      interrupted = options.signal?.aborted === true && !last;
      if (last || interrupted || (config.checkpointEvery > 0 && step % config.checkpointEvery === 0)) {
        await trainer.save(store, { step, cursor: stream.cursor, evals, stepSeconds }, resumeKey(config));
      }
      completedSteps = step;
      progress(step, out.metrics['reward/mean'] ?? Number.NaN);
      if (interrupted) {
        logger.info(`stopped after step ${step}; checkpoint saved: run again with --resume to continue`);
        break;
      }
    }
    const modelDir = join(outDir, TRAIN_DIRS.model);
    if (!interrupted) await exportModel(model, config.checkpoint, modelDir);
    return {
      outDir,
      estimator: config.estimator,
      seed: config.seed,
      steps: config.steps,
      evals,
      secondsPerStep: median(stepSeconds),
      wallSeconds: (performance.now() - t0) / 1000,
      modelDir,
      resumedFrom: start,
      interrupted,
      completedSteps,
    };
  } finally {
    trainer.optimizer.dispose();
    model.dispose();
  }
}

function prepare(config: TrainConfig): PreparedEstimator {
  try {
    return prepareEstimator(config.estimator, config.estimatorConfig);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const field = code === 'unknown_name' ? 'estimator' : 'estimatorConfig';
    throw new ReferenceTrainerError('invalid_config', `${field}: ${(err as Error).message}`, { field }, { cause: err });
  }
}

function cannotResume(err: unknown): never {
  throw new ReferenceTrainerError('invalid_options', `cannot resume: ${(err as Error).message}`, {}, { cause: err });
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}
