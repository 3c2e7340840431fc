/**
 * `saliency.refresh: epoch | minibatch`: the advantage refresh `rlvr train` hands the trainer. It
 * recomputes the signals that depend on the parameters (saliency scores, `policy.entropy`) of the rows about to be updated with the current parameters
 * (`refreshSignals`; on the trainer's policy workers when it has some: `refreshSignalsOnWorkers`)
 * and re-runs the estimator; the trainer only calls it. Built from data
 * (`RefreshSpec`: this module, `signalRefresh`, JSON options), so a data-parallel worker can build
 * the same refresh with `resolveRefresh(refresh.spec)`.
 */
import { prepareEstimator } from '@rlvr/advantages';
import type { EstimatorState, PreparedEstimator } from '@rlvr/advantages';
import type { RolloutBatch, Signals } from '@rlvr/core';
import type { PolicyWorkers, Qwen3Model } from '@rlvr/policy';
import { parseSignalConfig, refreshSignals, refreshSignalsOnWorkers } from '@rlvr/saliency';
import type { SignalPlan } from '@rlvr/saliency';
import type { AdvantageRefresh, RefreshContext, RefreshEvery, RefreshSpec } from '@rlvr/trainer';
import { z } from 'zod';
import { ReferenceTrainerError } from '../errors.js';
import { loadPlugins } from './plugins.js';

/** The options of `signalRefresh` (JSON: what `RefreshSpec.options` holds). */
export const SignalRefreshOptionsSchema = z
  .object({
    every: z.enum(['epoch', 'minibatch']),
    estimator: z.string().min(1),
    estimatorConfig: z.record(z.string(), z.unknown()).default({}),
    /** the run's `saliency` options */
    saliency: z.record(z.string(), z.unknown()).default({}),
    /** the trainer's temperature (new log-probs) */
    temperature: z.number().positive().default(1),
    /** plugin modules that register the estimator, as absolute paths */
    plugins: z.array(z.string().min(1)).default([]),
  })
  .strict();
export type SignalRefreshOptions = z.input<typeof SignalRefreshOptionsSchema>;

/**
 * Recomputes a step's advantages from its signals with the current parameters. Before each
 * `Trainer.step`, `useSignals` gives it the batch and the signals of the behaviour pass: rows it is
 * not asked about, and the old log-probs, keep those values.
 */
export class SignalRefresh implements AdvantageRefresh {
  readonly every: RefreshEvery;
  readonly spec: RefreshSpec;
  readonly #estimator: PreparedEstimator;
  readonly #plan: SignalPlan;
  #base: { batch: RolloutBatch; signals: Signals; state: EstimatorState | undefined } | null = null;

  constructor(options: z.output<typeof SignalRefreshOptionsSchema>, estimator: PreparedEstimator, plan: SignalPlan) {
    this.every = options.every;
    this.spec = { module: import.meta.url, factory: 'signalRefresh', options };
    this.#estimator = estimator;
    this.#plan = plan;
  }

  /** The batch of the next step, its signals from the behaviour pass, and the estimator's state before the step. */
  useSignals(batch: RolloutBatch, signals: Signals, state?: EstimatorState): void {
    this.#base = { batch, signals, state };
  }

  async advantages(model: Qwen3Model, batch: RolloutBatch, rows: readonly number[], ctx?: RefreshContext): Promise<Float32Array> {
    const base = this.#baseOf(batch);
    return this.#estimator.estimate(batch, await refreshSignals(model, batch, rows, this.#plan, base.signals, ctx), base.state).advantages;
  }

  /** `advantages` with the saliency backends run on the trainer's policy workers (`refreshSignalsOnWorkers`). */
  async advantagesOnWorkers(
    workers: PolicyWorkers,
    model: Qwen3Model,
    batch: RolloutBatch,
    rows: readonly number[],
    ctx?: RefreshContext,
  ): Promise<Float32Array> {
    const base = this.#baseOf(batch);
    const signals = await refreshSignalsOnWorkers(workers, model, batch, rows, this.#plan, base.signals, ctx);
    return this.#estimator.estimate(batch, signals, base.state).advantages;
  }

  #baseOf(batch: RolloutBatch): { signals: Signals; state: EstimatorState | undefined } {
    if (this.#base?.batch !== batch)
      throw new ReferenceTrainerError(
        'invalid_options',
        "the advantage refresh was not given this batch's signals (call useSignals before Trainer.step)",
        { field: 'saliency.refresh' },
      );
    return this.#base;
  }
}

/** The `RefreshSpec` factory: check the options, load the plugins, resolve the estimator and the signal plan. */
export async function signalRefresh(input: unknown): Promise<SignalRefresh> {
  const options = SignalRefreshOptionsSchema.parse(input);
  await loadPlugins(options.plugins);
  const estimator = prepareEstimator(options.estimator, options.estimatorConfig);
  const plan = parseSignalConfig(options.saliency, estimator.needs, { temperature: options.temperature, estimator: options.estimator });
  return new SignalRefresh(options, estimator, plan);
}
