import { METRIC, estimatorMetrics, stepSeed, stopwatch } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';
import type { AdvantageResult, EstimatorState, PreparedEstimator } from '@rlvr/advantages';
import { gradeBatch } from '@rlvr/math-verify';
import type { PolicyWorkers } from '@rlvr/policy';
import { resampleGroups, sampleGroups } from '@rlvr/rollout';
import type { PromptTask, Sampler } from '@rlvr/rollout';
import { computeSignals, computeSignalsOnWorkers, parseSignalConfig } from '@rlvr/saliency';
import { syncSeconds } from '@rlvr/trainer';
import type { Trainer } from '@rlvr/trainer';
import type { TrainConfig } from './config.js';
import type { SignalRefresh } from './refresh.js';

/** What one RL step produced: its metrics, and the batch and advantages (for samples.jsonl). */
export interface StepOutput {
  metrics: Record<string, number>;
  batch: RolloutBatch;
  adv: AdvantageResult;
  /** the groups a rollout stage re-sampled and the question of each (for samples.jsonl) */
  routed: { routed: number[]; routedQuestions: string[] };
}

/**
 * One RL step: sample, verify, signals, advantages, update. With `refresh`, the update recomputes
 * the advantages with the current parameters (per epoch or per mini-batch; `saliency.refresh`).
 * With `workers` (those of `trainer`), the signals are computed on them too (and `sampler` may
 * decode on them: `workerSampler`). `state` is the estimator's from the previous step (its next is `adv.state`); `render`
 * tokenizes the prompts a method's rollout stage re-samples on (`resampleGroups`).
 */
export async function rlStep(
  config: TrainConfig,
  estimator: PreparedEstimator,
  trainer: Trainer,
  sampler: Sampler,
  tasks: PromptTask[],
  step: number,
  padId: number,
  refresh: SignalRefresh | null = null,
  workers?: PolicyWorkers,
  state?: EstimatorState,
  render?: (question: string) => number[],
): Promise<StepOutput> {
  const r = config.rollout;
  const plan = parseSignalConfig(config.saliency, estimator.needs, {
    temperature: config.trainer.temperature,
    estimator: config.estimator,
  });
  const sync0 = workers === undefined ? 0 : syncSeconds(workers);
  const lap = stopwatch();
  // the answer spans (saliency loss, span overrides) are those of `saliency.box`; the reward grades the last box
  const sampling = {
    groupSize: r.groupSize,
    temperature: r.temperature,
    topP: r.topP,
    maxNewTokens: r.maxNewTokens,
    seed: stepSeed(config.seed, step),
    spans: { which: plan.box },
  };
  const first = await sampleGroups(
    tasks.map((t) => ({ tokens: t.prompt, ...(t.reference && { reference: t.reference }) })),
    sampler,
    sampling,
  );
  const sampleS = lap();
  gradeBatch(first.batch, first.texts, tasks);
  const verifyS = lap();
  const { batch, metrics: routing, ...routed } = await resampleGroups(estimator.rolloutStage, first, tasks, sampler, sampling, render);
  const pass = { padId, tokenBudget: config.trainer.tokenBudget };
  const { signals, oldLogprobs } = workers
    ? await computeSignalsOnWorkers(workers, trainer.model, batch, plan, pass)
    : await computeSignals(trainer.model, batch, plan, pass);
  const signalsS = lap();
  const adv = estimator.estimate(batch, signals, state);
  const advS = lap();
  refresh?.useSignals(batch, signals, state);
  const { metrics } = await trainer.step(batch, adv.advantages, {
    ...(oldLogprobs === undefined ? {} : { oldLogprobs }),
    ...(refresh === null ? {} : { refresh }),
  });
  const updateS = lap();
  return {
    metrics: {
      ...metrics,
      ...routing,
      ...estimatorMetrics(adv.metrics),
      [METRIC.timeSample]: sampleS,
      [METRIC.timeVerify]: verifyS,
      [METRIC.timeSignals]: signalsS,
      [METRIC.timeAdvantages]: advS,
      [METRIC.timeUpdate]: updateS,
      // the step's weight sync: the first publish after the last update copies, wherever it happens
      ...(workers === undefined ? {} : { [METRIC.timeWeightSync]: syncSeconds(workers) - sync0 }),
    },
    batch,
    adv,
    routed,
  };
}
