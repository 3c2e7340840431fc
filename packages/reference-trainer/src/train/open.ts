/**
 * Opening a train run, the first half of `runTrain`: everything is checked and loaded before the
 * run directory appears (plugins, the estimator and its options, the signals it needs, the
 * checkpoint, the data, the output directory, a resumed run's config and checkpoint), then the
 * directory, its `config.json` and, on resume, its repaired logs. The loop (run.ts) gets an
 * `OpenRun` and only steps.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { decodeState, prepareEstimator } from '@rlvr/advantages';
import type { EstimatorState, PreparedEstimator } from '@rlvr/advantages';
import { assertCreatable, createDirectory, readConfigFile, writeFileAtomic } from '@rlvr/core';
import type { Logger, RolloutBatch } from '@rlvr/core';
import { PolicyWorkers, loadModel, loadTokenizer, parseModelConfig, selectBackend } from '@rlvr/policy';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { checkPrompts, modelChatTemplate, plainChatTemplate, policySampler, promptBuilder, workerSampler } from '@rlvr/rollout';
import type { ProblemStream, PromptBuilder, PromptTask, Sampler } from '@rlvr/rollout';
import { parseSignalConfig, refreshesSignals } from '@rlvr/saliency';
import type { SignalPlan } from '@rlvr/saliency';
import { CheckpointStore, Trainer } from '@rlvr/trainer';
import { ReferenceTrainerError } from '../errors.js';
import { RUN_FILES, clearRunLogs, recordedSteps, repairRunLogs } from '@rlvr/report';
import type { EvalRecord } from '@rlvr/report';
import { parseTrainConfig, resumeDifferences, resumeKey, runConfigOf } from './config.js';
import type { TrainConfig, TrainRunConfig } from './config.js';
import { loadPlugins } from './plugins.js';
import { signalRefresh } from './refresh.js';
import type { SignalRefresh } from './refresh.js';
import { loadProblems } from './problems.js';

/** Sub-directories of a train run directory (beside config.json, metrics.jsonl, samples.jsonl). */
export const TRAIN_DIRS = { checkpoints: 'checkpoints', model: 'model' } as const;
/** The paths of a run directory's logs. */
interface RunLogs {
  metrics: string;
  samples: string;
  evals: string;
  checkpointWeights: string;
}

/** A run ready to step: what the loop reads and the state a checkpoint restored. */
export interface OpenRun {
  /** the config with the estimator's options resolved (what config.json holds, less `command`) */
  config: TrainConfig;
  estimator: PreparedEstimator;
  model: Qwen3Model;
  tokenizer: Tokenizer;
  trainer: Trainer;
  /** the step's sampler: the policy's, on the policy workers when there are some */
  sampler: Sampler;
  /** the held-out evaluation's sampler on the policy workers (none without workers: `heldOutEval` decodes in this thread) */
  evalSampler: Sampler | undefined;
  /** token ids that end a completion; the first pads */
  eosIds: number[];
  prompts: PromptBuilder;
  evalTasks: PromptTask[];
  stream: ProblemStream;
  store: CheckpointStore;
  logs: RunLogs;
  /** what recomputes the advantages during a step (`saliency.refresh` epoch or minibatch, with saliency signals), else null */
  refresh: SignalRefresh | null;
  /** the fixed evaluation rollouts of checkpoint-weights.jsonl, once sampled or read back */
  weightSet?: RolloutBatch;
  /** the last step done (0 for a fresh run) */
  start: number;
  evals: EvalRecord[];
  /** wall seconds of every step done, restored ones included */
  stepSeconds: number[];
  /** the estimator's state after the last step done (a stateful method's), restored from the checkpoint */
  estimatorState?: EstimatorState;
  /** the policy workers of the update (none with `workers: 1`) */
  workers: PolicyWorkers | undefined;
  /** release the model, the optimizer and the workers */
  close(): Promise<void>;
}

/**
 * Check everything, load the policy, create (or, with `resume`, reopen) the run directory. A
 * fresh run refuses an `outDir` holding a run's records; `resume` continues from the latest
 * checkpoint, after refusing one of another trajectory (differing fields named) and cutting the
 * logs back to it. Without a checkpoint, `resume` refuses a run that recorded a step (nothing is
 * erased) and starts over, saying so, one that recorded none.
 */
export async function openRun(input: TrainConfig, outDir: string, options: { resume?: boolean; logger: Logger }): Promise<OpenRun> {
  const { logger } = options;
  await loadPlugins(input.plugins);
  const runFile = join(outDir, RUN_FILES.config);
  // another estimator is named as such, before the run's options for its own are checked against this one
  if (options.resume) await checkRunConfig(runFile, input, true);
  const estimator = prepare(input);
  const plan = signalPlan(input, estimator);
  const runConfig = runConfigOf(input, estimator.config, plan);
  const { command: _command, ...config } = runConfig;
  if (!existsSync(join(config.checkpoint, 'config.json'))) {
    throw new ReferenceTrainerError('missing_file', `checkpoint ${config.checkpoint} not found (no config.json there)`, {
      file: config.checkpoint,
      field: 'checkpoint',
    });
  }
  const logs: RunLogs = {
    metrics: join(outDir, RUN_FILES.metrics),
    samples: join(outDir, RUN_FILES.samples),
    evals: join(outDir, RUN_FILES.evals),
    checkpointWeights: join(outDir, RUN_FILES.checkpointWeights),
  };
  const store = new CheckpointStore(join(outDir, TRAIN_DIRS.checkpoints), config.keepCheckpoints);
  const problems = await loadProblems(config, logger);
  await assertCreatable(outDir);
  // Estimators whose signals do not depend on the parameters (grpo, process scores) have nothing to recompute.
  const refresh = !refreshesSignals(plan)
    ? null
    : await signalRefresh({
        every: plan.refresh,
        estimator: config.estimator,
        estimatorConfig: config.estimatorConfig,
        saliency: config.saliency,
        temperature: config.trainer.temperature,
        plugins: config.plugins.map((p) => resolve(p)),
      });
  if (options.resume) await checkRunConfig(runFile, config);
  // Refuse a checkpoint of another trajectory before loading anything (the differing fields are named); pass over damaged ones, saying so.
  const latest = options.resume
    ? await store
        .latestIntact(resumeKey(config), (dir, err) =>
          logger.warn(`${err.message}: checkpoint ${dir} is damaged; falling back to the one before it`),
        )
        .catch(cannotResume)
    : null;
  if (latest === null) await refuseToErase(outDir, logs, store, options.resume === true, logger);

  // The tokenizer and the prompts first: every prompt of a data file, and the held-out ones, must fit the policy's context (file and line named) before tfjs starts.
  const { tokenizer, context } = fromCheckpoint(config.checkpoint, () => ({
    tokenizer: loadTokenizer(config.checkpoint),
    context: parseModelConfig(JSON.parse(readFileSync(join(config.checkpoint, 'config.json'), 'utf8'))).max_position_embeddings,
  }));
  const template = modelChatTemplate(config.checkpoint, tokenizer);
  const prompts = promptBuilder(config.prompt, template.apply ?? plainChatTemplate);
  const evalTasks = checkPrompts(problems.heldOut, tokenizer, prompts, { context, maxNewTokens: config.eval.maxNewTokens, field: 'eval' });
  if (problems.train !== undefined)
    checkPrompts(problems.train, tokenizer, prompts, { context, maxNewTokens: config.rollout.maxNewTokens, field: 'rollout' });

  // the backend's line waits for the policy line: a run that fails before it prints its error alone
  const held: string[] = [];
  const backend = await selectBackend({ backend: config.backend }, { ...logger, info: (m: string) => held.push(m) });
  const model = fromCheckpoint(config.checkpoint, () => loadModel(config.checkpoint));
  let trainer: Trainer | undefined;
  let workers: PolicyWorkers | undefined;
  try {
    // Completions end at the config's eos_token_id(s) and the tokenizer's <|im_end|> / <|endoftext|> (the sampler's rule, as in rlvr-serve and rlvr eval).
    const sampler = policySampler(model, tokenizer, { batchSize: config.rollout.batchSize });
    const eosIds = [...sampler.eosTokenIds];
    if (eosIds[0] === undefined) {
      throw new ReferenceTrainerError(
        'invalid_config',
        'the checkpoint has no end-of-sequence token (no eos_token_id in config.json, no <|im_end|> or <|endoftext|> in the tokenizer): completions could not end',
        { file: join(config.checkpoint, 'config.json'), field: 'eos_token_id' },
      );
    }

    await createDirectory(outDir);
    await writeFileAtomic(join(outDir, RUN_FILES.config), JSON.stringify(runConfig satisfies TrainRunConfig, null, 2) + '\n');
    const threads = workerCount(config.workers);
    workers = threads > 1 ? await PolicyWorkers.start(model, { workers: threads, backend }) : undefined;
    trainer = new Trainer(model, config.trainer, { padId: eosIds[0], ...(workers === undefined ? {} : { workers }) });
    for (const m of held) logger.info(m);
    logger.info(
      `policy: ${config.checkpoint} (${model.numParameters().toLocaleString('en')} parameters, backend ${String(backend)}, ${threads === 1 ? 'no policy workers' : `${threads} policy workers`}); estimator ${config.estimator}; ${config.rollout.prompts} prompts x ${config.rollout.groupSize} completions per step`,
    );

    const run: OpenRun = {
      config,
      estimator,
      model,
      tokenizer,
      trainer,
      sampler:
        workers === undefined
          ? sampler
          : workerSampler(workers, model, sampler, {
              modelDir: config.checkpoint,
              options: { batchSize: config.rollout.batchSize, eosTokenIds: eosIds },
            }),
      evalSampler:
        workers === undefined
          ? undefined
          : workerSampler(workers, model, sampler, {
              modelDir: config.checkpoint,
              options: { batchSize: config.eval.batchSize, eosTokenIds: eosIds, padTokenId: eosIds[0] },
            }),
      eosIds,
      prompts,
      evalTasks,
      stream: problems.stream,
      refresh,
      store,
      logs,
      start: 0,
      evals: [],
      stepSeconds: [],
      workers,
      close: async () => {
        trainer?.optimizer.dispose();
        model.dispose();
        await workers?.close();
      },
    };
    if (latest === null) {
      // a fresh run, or a --resume of one that recorded no step (refuseToErase)
      await clearRunLogs(Object.values(logs));
      return run;
    }
    const state = await trainer.restore(store, latest, resumeKey(config)).catch(cannotResume);
    run.start = state.step as number;
    run.stream.cursor = state.cursor as number;
    run.evals = state.evals as EvalRecord[];
    run.stepSeconds = state.stepSeconds as number[];
    if (state.estimatorState != null) run.estimatorState = decodeState(state.estimatorState);
    for (const note of await repairRunLogs(Object.values(logs), run.start)) logger.info(note);
    logger.info(`resumed from ${latest} (step ${run.start})`);
    return run;
  } catch (err) {
    trainer?.optimizer.dispose();
    model.dispose();
    await workers?.close();
    throw err;
  }
}

/**
 * Starting over must never erase a run: refuse when `outDir` records a step (in a log), holds a
 * checkpoint or a final policy, naming what it found. A `resume` of a run that recorded no step
 * (it died before its first one) starts over, in one line.
 */
async function refuseToErase(outDir: string, logs: RunLogs, store: CheckpointStore, resume: boolean, logger: Logger): Promise<void> {
  if (!resume && existsSync(logs.metrics))
    throw new ReferenceTrainerError(
      'invalid_options',
      `${logs.metrics} exists: pick another --out or pass --resume (a run directory is never overwritten)`,
      { file: outDir },
    );
  const steps = await recordedSteps(Object.values(logs));
  const found = [
    ...(steps.length === 0
      ? []
      : [`steps up to ${Math.max(...steps.map((s) => s.lastStep))} (${steps.map((s) => basename(s.file)).join(', ')})`]),
    ...(resume || (await store.latest()) === null ? [] : [`checkpoints (${TRAIN_DIRS.checkpoints}/)`]),
    ...(existsSync(join(outDir, TRAIN_DIRS.model)) ? [`a final policy (${TRAIN_DIRS.model}/)`] : []),
  ].join(' and ');
  if (found === '') {
    if (resume && existsSync(join(outDir, RUN_FILES.config)))
      logger.info(`${outDir}: no checkpoint and no step recorded: starting the run over`);
    return;
  }
  throw new ReferenceTrainerError(
    'invalid_options',
    resume
      ? `cannot resume: no checkpoint (${await store.whyNone()}), but the run records ${found}: starting over would erase them: restore the checkpoints, or move ${outDir} aside to start the run over`
      : `it holds a run's ${found}: pick another --out or pass --resume (a run directory is never overwritten)`,
    { file: outDir },
  );
}

/** The worker threads of `workers`: `auto` is the machine's available parallelism. */
function workerCount(workers: TrainConfig['workers']): number {
  return workers === 'auto' ? availableParallelism() : workers;
}

/**
 * On resume: refuse a config that differs from the run's own config.json in what shapes the
 * trajectory, naming each difference; `estimatorOnly` compares the estimator's name alone.
 */
async function checkRunConfig(file: string, config: TrainConfig, estimatorOnly = false): Promise<void> {
  if (!existsSync(file)) return;
  const run = parseTrainConfig(await readConfigFile(file), file);
  let diff: string[];
  if (estimatorOnly) {
    diff =
      run.estimator === config.estimator
        ? []
        : [`estimator: the run has ${JSON.stringify(run.estimator)}, given ${JSON.stringify(config.estimator)}`];
  } else {
    // resolved as this run's options are (a config.json of an older version may hold `{}`)
    const estimator = prepare(run);
    const { estimatorConfig, saliency } = runConfigOf(run, estimator.config, signalPlan(run, estimator));
    diff = resumeDifferences({ ...run, estimatorConfig, saliency }, config);
  }
  if (diff.length > 0) {
    throw new ReferenceTrainerError(
      'invalid_options',
      `cannot resume: the run's config differs in ${diff.join('; ')} (only steps, checkpoint and sample cadence, backend, workers and plugins may change)`,
      { file },
    );
  }
}

function signalPlan(config: TrainConfig, estimator: PreparedEstimator): SignalPlan {
  return parseSignalConfig(config.saliency, estimator.needs, { temperature: config.trainer.temperature, estimator: config.estimator });
}

function prepare(config: TrainConfig): PreparedEstimator {
  try {
    return prepareEstimator(config.estimator, config.estimatorConfig);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const field = code === 'unknown_name' ? 'estimator' : 'estimatorConfig';
    throw new ReferenceTrainerError('invalid_config', (err as Error).message, { field }, { cause: err });
  }
}

/** `read()` of the checkpoint `dir`, a failure named as the checkpoint's. */
function fromCheckpoint<T>(dir: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new ReferenceTrainerError(
      'read_failed',
      `cannot load the checkpoint: ${(err as Error).message}`,
      { file: dir, field: 'checkpoint' },
      { cause: err },
    );
  }
}

function cannotResume(err: unknown): never {
  throw new ReferenceTrainerError('invalid_options', `cannot resume: ${(err as Error).message}`, {}, { cause: err });
}
