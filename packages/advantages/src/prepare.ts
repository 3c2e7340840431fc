import type { z } from 'zod';
import {
  bindRolloutStage,
  isRlvrError,
  parseConfig,
  type BoundRolloutStage,
  type RolloutBatch,
  type SignalName,
  type Signals,
} from '@rlvr/core';
import { AdvantagesError } from './errors.js';
import type { EstimatorConfig, EstimatorOptions } from './option-types.js';
import { getEstimator } from './registry.js';
import type { AdvantageEstimator, AdvantageResult, ConfigSchema, EstimatorState } from './types.js';

/** An estimator with its configuration parsed and checked: ready to run on batches. */
export interface PreparedEstimator<Config = Record<string, unknown>> {
  readonly estimator: AdvantageEstimator;
  /** the resolved configuration, defaults filled in (write it into the run directory) */
  readonly config: Readonly<Config>;
  readonly needs: readonly SignalName[];
  /**
   * Whether a rollout's advantage depends on rollouts outside its group under this configuration
   * (batch whitening, a batch std): then a caller may not split the batch by group.
   */
  readonly batchCoupled: boolean;
  /** the method's rollout stage with these options, when it has one: a trainer runs it after grading (`@rlvr/rollout`'s `resampleGroups`) */
  readonly rolloutStage?: BoundRolloutStage;
  /**
   * The advantages of `batch`. `state` is the previous step's `result.state` (a stateful method's;
   * undefined on the first step): the caller carries it, so that a refresh or a retry of a step can
   * run it again from the same state.
   */
  estimate(batch: RolloutBatch, signals: Signals, state?: EstimatorState): AdvantageResult;
}

/**
 * Resolve an estimator (a name or an object) and parse its configuration before
 * any work: bad options throw `AdvantagesError('invalid_config')` naming each field
 * and the allowed values; an unknown name throws `unknown_name`. With a name the
 * type map knows (`option-types.ts`), the options are type-checked as well.
 */
export function prepareEstimator<N extends string>(estimator: N, config?: EstimatorOptions<N>): PreparedEstimator<EstimatorConfig<N>>;
export function prepareEstimator<S extends ConfigSchema>(
  estimator: AdvantageEstimator<S>,
  config?: z.input<S>,
): PreparedEstimator<z.output<S>>;
export function prepareEstimator(estimator: string | AdvantageEstimator, config: unknown = {}): PreparedEstimator {
  const est = typeof estimator === 'string' ? getEstimator(estimator) : estimator;
  let parsed: Record<string, unknown>;
  try {
    parsed = parseConfig(est.configSchema, config, `estimator ${est.name}`) as Record<string, unknown>;
  } catch (err) {
    // the message (every bad field, the allowed values) is core's; the error is this package's
    if (isRlvrError(err) && err.code === 'invalid_config')
      throw new AdvantagesError('invalid_config', err.message, err.location, { cause: err.cause });
    throw err;
  }
  const coupled = est.batchCoupled;
  return {
    estimator: est,
    config: Object.freeze({ ...parsed }),
    needs: est.needs,
    batchCoupled: typeof coupled === 'function' ? coupled(parsed) : coupled,
    estimate: (batch, signals, state) => est.estimate(batch, signals, parsed, state),
    ...(est.rolloutStage === undefined ? {} : { rolloutStage: bindRolloutStage(est.name, est.rolloutStage, parsed) }),
  };
}

/** One-shot: `prepareEstimator(name, config).estimate(batch, signals)`. */
export function estimateAdvantages<N extends string>(
  estimator: N,
  batch: RolloutBatch,
  signals: Signals,
  config?: EstimatorOptions<N>,
): AdvantageResult;
export function estimateAdvantages<S extends ConfigSchema>(
  estimator: AdvantageEstimator<S>,
  batch: RolloutBatch,
  signals: Signals,
  config?: z.input<S>,
): AdvantageResult;
export function estimateAdvantages(
  estimator: string | AdvantageEstimator,
  batch: RolloutBatch,
  signals: Signals,
  config: unknown = {},
): AdvantageResult {
  return prepareEstimator(estimator as string, config).estimate(batch, signals);
}
