import { join } from 'node:path';
import { encodeState, noSignalReason } from '@rlvr/advantages';
import { METRIC, appendJsonl, describeFsError, median } from '@rlvr/core';
import type { RolloutBatch, StepProgress } from '@rlvr/core';
import { exportModelDir } from '@rlvr/policy';
import { toPromptTasks } from '@rlvr/rollout';
import { ReferenceTrainerError } from '../errors.js';
import { resumeKey } from './config.js';
import type { TrainConfig } from './config.js';
import { evaluateRun } from './held-out.js';
import { openRun, TRAIN_DIRS } from './open.js';
import type { OpenRun } from './open.js';
import { sampleRecords } from '@rlvr/report';
import type { EvalRecord } from '@rlvr/report';
import { rlStep } from './step.js';

/** Where progress goes: the CLI prints it; library code never does. */
export interface TrainLogger {
  info(message: string): void;
  warn?(message: string): void;
  /** after every step (and after the step-0 evaluation, with step 0) */
  progress?(p: TrainProgress): void;
}

/** After every step: where the run stands (`StepProgress`, the summary's median s/step at the last step). */
export type TrainProgress = StepProgress;

export interface TrainSummary {
  outDir: string;
  estimator: string;
  seed: number;
  steps: number;
  /** step 0 (the starting checkpoint) first, then every `eval.every` steps and the last step */
  evals: EvalRecord[];
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

/**
 * The RLVR loop: sample P x G completions with the policy, grade them with `mathReward`,
 * compute the signals the estimator needs, estimate per-token advantages, one `Trainer.step`.
 * Held-out evaluation before the first step, every `eval.every` steps and after the last.
 * Writes the run directory:
 *
 * ```
 * OUT/config.json        the resolved config, the estimator's options included (TrainRunConfigSchema)
 * OUT/metrics.jsonl      per step: reward, loss, KL, entropy, clip fractions, weights by outcome, timings;
 *                        accuracy, pass@n, accuracy/greedy on eval steps (step 0 = the starting checkpoint)
 * OUT/samples.jsonl      some rollouts every `sampleEvery` steps, with their token weights (for the report)
 * OUT/evals.jsonl        every held-out evaluation with per-problem correct counts
 * OUT/checkpoint-weights.jsonl  at every evaluation, the GRAIL weights of fixed evaluation rollouts (symmetry both)
 * OUT/checkpoints/       step-NNNNNN/ (weights, optimizer, RNG and data cursor) for `resume`
 * OUT/model/             the final policy, loadable by `loadModel` / `rlvr eval --model`
 * ```
 *
 * `openRun` checks everything before anything is written. `resume` continues from the latest
 * checkpoint (the logs cut back to it) and gives the same numbers as an uninterrupted run on the
 * same backend. `signal` stops after the current step, with a checkpoint.
 */
export async function runTrain(
  config: TrainConfig,
  outDir: string,
  options: {
    resume?: boolean;
    logger?: TrainLogger;
    signal?: AbortSignal;
    /** told when a step (its checkpoint, and the final export after the last) starts and ends */
    onStep?: (inFlight: boolean) => void;
  } = {},
): Promise<TrainSummary> {
  const t0 = performance.now();
  const logger = { info: options.logger?.info ?? (() => {}), warn: options.logger?.warn ?? options.logger?.info ?? (() => {}) };
  const run = await openRun(config, outDir, { resume: options.resume === true, logger });
  const c = run.config;
  const progress = (step: number, reward: number) =>
    options.logger?.progress?.({
      step,
      steps: c.steps,
      reward,
      accuracy: run.evals.at(-1)?.accuracy ?? Number.NaN,
      secondsPerStep: median(run.stepSeconds),
    });
  const every = (n: number, step: number) => n > 0 && step % n === 0;
  try {
    if (run.start >= c.steps && run.evals.some((e) => e.step === run.start))
      logger.info(`nothing to do: the run already has ${run.start} steps`);
    if (run.start === 0) {
      await appendJsonl(run.logs.metrics, [{ step: 0, ...(await evaluateRun(run, 0, logger)) }]);
      progress(0, Number.NaN);
    }
    let step = run.start;
    let interrupted = false;
    // the first (up to 3) steps' batches: if no group among them has a reward spread, the run learns nothing: say so, and why
    const early: RolloutBatch[] = [];
    while (step < c.steps && !interrupted) {
      step++;
      options.onStep?.(true);
      const s0 = performance.now();
      const tasks = toPromptTasks(run.stream.next(c.rollout.prompts), run.tokenizer, run.prompts);
      const out = await rlStep(
        c,
        run.estimator,
        run.trainer,
        run.sampler,
        tasks,
        step,
        run.eosIds[0]!,
        run.refresh,
        run.workers,
        run.estimatorState,
        (q) => run.tokenizer.encode(run.prompts.text(q)),
      );
      run.estimatorState = out.adv.state;
      if (early.length < 3 && early.push(out.batch) === Math.min(3, c.steps - run.start)) {
        const why = noSignalReason(early);
        if (why !== null) logger.warn(`no learning signal in step${early.length > 1 ? `s ${run.start + 1}-` : ' '}${step}: ${why}`);
      }
      const seconds = (performance.now() - s0) / 1000;
      run.stepSeconds.push(seconds);
      const last = step === c.steps;
      const record: Record<string, number | null> = { step, ...out.metrics, [METRIC.timeStep]: seconds };
      if (last || every(c.eval.every, step)) Object.assign(record, await evaluateRun(run, step, logger));
      await appendJsonl(run.logs.metrics, [record]);
      if (c.samples > 0 && c.sampleEvery > 0 && (step === 1 || last || every(c.sampleEvery, step))) {
        const decode = (id: number) => run.tokenizer.decode([id]);
        const questions = tasks.map((t) => t.question);
        const rows = sampleRecords(step, out.batch, out.adv, questions, decode, c.rollout.groupSize, c.samples, out.routed);
        await appendJsonl(run.logs.samples, rows);
      }
      interrupted = options.signal?.aborted === true && !last;
      if (last || interrupted || every(c.checkpointEvery, step)) await saveCheckpoint(run, step);
      progress(step, out.metrics[METRIC.rewardMean] ?? Number.NaN);
      if (!last && !interrupted) options.onStep?.(false);
    }
    if (interrupted) logger.info(`stopped after step ${step}; checkpoint saved: run again with --resume to continue`);
    const modelDir = join(outDir, TRAIN_DIRS.model);
    if (!interrupted) await exportModelDir(run.model, modelDir, c.checkpoint);
    return {
      outDir,
      estimator: c.estimator,
      seed: c.seed,
      steps: c.steps,
      evals: run.evals,
      secondsPerStep: median(run.stepSeconds),
      wallSeconds: (performance.now() - t0) / 1000,
      modelDir,
      resumedFrom: run.start,
      interrupted,
      completedSteps: step,
    };
  } finally {
    await run.close();
  }
}

/** Checkpoint `step` (weights, optimizer, data cursor, evaluations, step times, the estimator's state); a failure names the checkpoint directory. */
async function saveCheckpoint(run: OpenRun, step: number): Promise<void> {
  try {
    await run.trainer.save(
      run.store,
      {
        step,
        cursor: run.stream.cursor,
        evals: run.evals,
        stepSeconds: run.stepSeconds,
        ...(run.estimatorState === undefined ? {} : { estimatorState: encodeState(run.estimatorState) }),
      },
      resumeKey(run.config),
    );
  } catch (err) {
    // a NaN or infinity in the weights or the optimizer: named, and the checkpoints on disk left as they are
    if ((err as { code?: string }).code === 'non_finite')
      throw new ReferenceTrainerError(
        'non_finite',
        `cannot save the checkpoint of step ${step}: ${(err as Error).message}; --resume continues from ${(await run.store.latest()) ?? 'the start'}`,
        { file: run.store.root },
        { cause: err },
      );
    throw new ReferenceTrainerError(
      'write_failed',
      `cannot save the checkpoint of step ${step}: ${describeFsError(err, join(run.store.root, 'step'))}`,
      { file: run.store.root },
      { cause: err },
    );
  }
}
