import { constants, existsSync } from 'node:fs';
import { access, appendFile, copyFile, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { getSpans, totalTokens } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';
import type { AdvantageResult, PreparedEstimator } from '@rlvr/advantages';
import { mathReward } from '@rlvr/math-verify';
import { PRUNED_FILE, loadModel, loadTokenizer, saveModel, selectBackend } from '@rlvr/policy';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { loadTasks, modelChatTemplate, plainChatTemplate, policySampler, promptBuilder, sampleGroups } from '@rlvr/rollout';
import type { PromptBuilder } from '@rlvr/rollout';
import { CheckpointStore, Trainer } from '@rlvr/trainer';
import { writeFileAtomic } from '../atomic-write.js';
import { ReferenceTrainerError } from '../errors.js';
import { RUN_FILES } from '../run-dir.js';
import type { SampleRecord } from '../run-dir.js';
import type { TrainConfig } from './config.js';
import { heldOutEval } from './held-out-eval.js';
import type { HeldOutResult } from './held-out-eval.js';
import { loadPlugins } from './plugins.js';
import { checkSignals, computeSignals } from './signals.js';
import { FileStream, TaskStream, heldOutTasks, splitHeldOut, toPromptTasks } from './tasks.js';
import type { Problem, ProblemStream, PromptTask } from './tasks.js';

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
  /** mean wall seconds of one training step (sample, verify, signals, advantages, update), evaluation excluded */
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

/** Tokenizer files copied from the starting checkpoint into `OUT/model`. */
const TOKENIZER_FILES = [PRUNED_FILE, 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'generation_config.json'];

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
  checkSignals(config.estimator, estimator.needs);
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
      const greedy = e.greedyAccuracy === undefined ? '' : `, greedy ${pct(e.greedyAccuracy)}`;
      logger.info(`eval step ${step}: accuracy ${pct(e.accuracy)} (mean of ${e.n} samples at T=${config.eval.temperature}), pass@${e.n} ${pct(e.passAtN)}${greedy} on ${e.problems} held-out problems`);
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
      secondsPerStep: mean(stepSeconds),
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

/** The held-out and training problems: the synthetic task, or the `data` files (read before anything is written). */
async function loadProblems(config: TrainConfig): Promise<{ heldOut: Problem[]; stream: ProblemStream }> {
  if (config.data === undefined) {
    const heldOut = heldOutTasks(config.eval.seed, config.eval.problems, config.evalTask ?? config.task);
    return { heldOut, stream: new TaskStream(config.seed, config.task, heldOut) };
  }
  const { train, eval: evalFile, format } = config.data;
  const read = async (file: string, field: string): Promise<Problem[]> => {
    try {
      return (await loadTasks(file, format)).map((t) => ({ question: t.question, answer: t.answer }));
    } catch (err) {
      const missing = !existsSync(file);
      throw new ReferenceTrainerError(missing ? 'missing_file' : 'invalid_record', (err as Error).message, { field: `data.${field}` }, { cause: err });
    }
  };
  const all = await read(train, 'train');
  const split = evalFile === undefined ? splitHeldOut(all, config.eval.problems, config.eval.seed) : { heldOut: (await read(evalFile, 'eval')).slice(0, config.eval.problems), train: all };
  if (split.train.length === 0) throw new ReferenceTrainerError('invalid_config', `data.train: ${train} has ${all.length} problems, all held out for evaluation: lower eval.problems or give data.eval`, { field: 'data.train' });
  if (split.heldOut.length === 0) throw new ReferenceTrainerError('invalid_config', 'data.eval: no held-out problems', { field: 'data.eval' });
  return { heldOut: split.heldOut, stream: new FileStream(split.train, config.seed) };
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

interface StepOutput {
  metrics: Record<string, number>;
  batch: RolloutBatch;
  adv: AdvantageResult;
}

/** One RL step: sample, verify, signals, advantages, update. */
async function rlStep(config: TrainConfig, estimator: PreparedEstimator, trainer: Trainer, sampler: ReturnType<typeof policySampler>, tasks: PromptTask[], step: number, padId: number): Promise<StepOutput> {
  const r = config.rollout;
  const lap = stopwatch();
  const { batch, texts } = await sampleGroups(
    tasks.map((t) => ({ tokens: t.prompt })),
    sampler,
    { groupSize: r.groupSize, temperature: r.temperature, topP: r.topP, maxNewTokens: r.maxNewTokens, seed: stepSeed(config.seed, step) },
  );
  const sampleS = lap();
  texts.forEach((text, i) => {
    batch.rewards[i] = batch.finish[i] === 2 ? 0 : mathReward(text, tasks[Math.floor(i / r.groupSize)]!.answer).reward;
  });
  const verifyS = lap();
  const { signals, oldLogprobs } = computeSignals(trainer.model, batch, estimator.needs, config.saliency, padId);
  const signalsS = lap();
  const adv = estimator.estimate(batch, signals);
  const advS = lap();
  const { metrics } = trainer.step(batch, adv.advantages, oldLogprobs === undefined ? {} : { oldLogprobs });
  const updateS = lap();
  return {
    metrics: {
      ...metrics,
      ...estimatorMetrics(adv.metrics),
      'time/sample_s': sampleS,
      'time/verify_s': verifyS,
      'time/signals_s': signalsS,
      'time/advantages_s': advS,
      'time/update_s': updateS,
    },
    batch,
    adv,
  };
}

/** Estimator metrics under report names: `weight_mean_correct` -> `weights/correct/mean`, others under `adv/`. */
export function estimatorMetrics(m: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) {
    const w = /^weight_(mean|std|min|max)(?:_(correct|wrong))?$/.exec(k);
    if (w) out[`weights/${w[2] ?? 'all'}/${w[1]}`] = v;
    else out[`adv/${k}`] = v;
  }
  return out;
}

/**
 * `count` rollouts of the step for samples.jsonl, spread over the groups (the first of every
 * k-th group, alternating with the last, so both outcomes tend to show).
 */
function sampleRecords(step: number, batch: RolloutBatch, adv: AdvantageResult, tasks: readonly PromptTask[], tokenizer: Tokenizer, G: number, count: number): SampleRecord[] {
  const B = batch.numRollouts;
  const picks = new Set<number>();
  for (let k = 0; k < Math.min(count, B); k++) {
    const g = Math.floor((k * B) / Math.min(count, B) / G);
    picks.add(Math.min(B - 1, g * G + (k % 2 === 0 ? 0 : G - 1)));
  }
  return [...picks].sort((a, b) => a - b).map((i) => {
    const c0 = batch.completionOffsets[i]!;
    const c1 = batch.completionOffsets[i + 1]!;
    const ids = Array.from(batch.completionTokens.subarray(c0, c1));
    return {
      step,
      group: batch.groupIndex[i]!,
      reward: batch.rewards[i]!,
      correct: batch.rewards[i]! > 0,
      advantage: adv.sequenceAdvantages[i]!,
      prompt: tasks[batch.groupIndex[i]!]!.question,
      tokens: ids.map((id) => tokenizer.decode([id])),
      weights: Array.from(adv.weights.subarray(c0, c1)),
      spans: getSpans(batch, i),
    };
  });
}

/** Keep the records of a JSONL file with `step <= last` (rewritten atomically); a missing file stays missing. */
async function truncateJsonl(file: string, last: number): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return;
  }
  const kept = text.split('\n').filter((line) => line.trim() !== '' && (JSON.parse(line) as { step: number }).step <= last);
  await writeFileAtomic(file, kept.map((l) => l + '\n').join(''));
}

/** Write the policy as a model directory (weights + the starting checkpoint's tokenizer files) via a temporary directory and a rename. */
async function exportModel(model: Qwen3Model, from: string, dir: string): Promise<void> {
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  saveModel(model, tmp);
  for (const f of TOKENIZER_FILES) if (existsSync(join(from, f))) await copyFile(join(from, f), join(tmp, f));
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/** The sampling seed of step `step`: distinct per step, the same for every estimator. */
function stepSeed(seed: number, step: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + step) >>> 0;
}

/** Fail before any work when `dir` could not be created: its nearest existing ancestor is a file or not writable. */
async function assertCreatable(dir: string): Promise<void> {
  let p = resolve(dir);
  for (;;) {
    const st = await stat(p).catch(() => null);
    if (st !== null) {
      const fail = (code: string) => {
        throw new ReferenceTrainerError('write_failed', `cannot create the output directory ${dir}: ${mkdirReason(Object.assign(new Error(code), { code }))}`, { file: dir });
      };
      if (!st.isDirectory()) fail(p === resolve(dir) ? 'EEXIST' : 'ENOTDIR');
      await access(p, constants.W_OK).catch(() => fail('EACCES'));
      return;
    }
    const up = dirname(p);
    if (up === p) return;
    p = up;
  }
}

function cannotResume(err: unknown): never {
  throw new ReferenceTrainerError('invalid_options', `cannot resume: ${(err as Error).message}`, {}, { cause: err });
}

function mkdirReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a path component is a file, not a directory';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'permission denied';
  return (err as Error).message;
}

function stopwatch(): () => number {
  let t = performance.now();
  return () => {
    const now = performance.now();
    const s = (now - t) / 1000;
    t = now;
    return s;
  };
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

