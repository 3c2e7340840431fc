import type { z } from 'zod';
import { parseConfig, type RolloutBatch, type SignalName, type Signals } from '@rlvr/core';
import { getEstimator } from './registry.js';
import type { AdvantageEstimator, AdvantageResult, ConfigSchema } from './types.js';

/** An estimator with its configuration parsed and checked: ready to run on batches. */
export interface PreparedEstimator {
  readonly estimator: AdvantageEstimator;
  /** the resolved configuration, defaults filled in (write it into the run directory) */
  readonly config: Readonly<Record<string, unknown>>;
  readonly needs: readonly SignalName[];
  estimate(batch: RolloutBatch, signals: Signals): AdvantageResult;
}

/**
 * Resolve an estimator (a name or an object) and parse its configuration before
 * any work: bad options throw `CoreError('invalid_config')` naming each field
 * and the allowed values; an unknown name throws `unknown_name`.
 */
export function prepareEstimator(estimator: string | AdvantageEstimator, config: unknown = {}): PreparedEstimator {
  const est = typeof estimator === 'string' ? getEstimator(estimator) : estimator;
  const parsed = parseConfig(est.configSchema, config, `estimator ${est.name}`) as z.output<ConfigSchema>;
  return {
    estimator: est,
    config: Object.freeze({ ...parsed }),
    needs: est.needs,
    estimate: (batch, signals) => est.estimate(batch, signals, parsed),
  };
}

/** One-shot: `prepareEstimator(name, config).estimate(batch, signals)`. */
export function estimateAdvantages(estimator: string | AdvantageEstimator, batch: RolloutBatch, signals: Signals, config: unknown = {}): AdvantageResult {
  return prepareEstimator(estimator, config).estimate(batch, signals);
}
