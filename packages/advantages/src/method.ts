import type { z } from 'zod';
import { totalTokens, type RolloutBatch, type Signals } from '@rlvr/core';
import { AdvantagesError } from './errors.js';
import type { AdvantageEstimator, AdvantageMethod, AdvantageResult, ConfigSchema, EstimatorState } from './types.js';

/**
 * An `AdvantageEstimator` from a method of the general contract: `estimate` checks the signals
 * (sized for the batch, every one in `needs` present) before any work, gives `compute` a fresh
 * `out[T]`, and fills what the method does not report (weights 1, sequence advantages the mean of
 * each rollout's advantages). Register the result with `registerEstimator`.
 */
export function defineMethod<S extends ConfigSchema, State extends EstimatorState = EstimatorState>(
  method: AdvantageMethod<S, State>,
): AdvantageEstimator<S> {
  const { name, needs } = method;
  return {
    name,
    description: method.description,
    configSchema: method.configSchema,
    needs: [...needs],
    batchCoupled: method.batchCoupled ?? true,
    ...(method.rolloutStage === undefined ? {} : { rolloutStage: method.rolloutStage }),
    estimate(batch: RolloutBatch, signals: Signals, config: z.output<S>, state?: EstimatorState): AdvantageResult {
      const T = totalTokens(batch);
      checkSignals(name, needs, batch, signals, T);
      const advantages = new Float32Array(T);
      const out = method.compute({ batch, signals, config, state: state as State | undefined }, advantages);
      const result: AdvantageResult = {
        advantages,
        weights: out.weights ?? new Float32Array(T).fill(1),
        sequenceAdvantages: out.sequenceAdvantages ?? rolloutMeans(batch, advantages),
        metrics: out.metrics ?? {},
      };
      if (out.state !== undefined) result.state = out.state;
      return result;
    },
  };
}

/** The signals fit the batch and hold every needed one, or an `AdvantagesError` naming what is wrong. */
function checkSignals(name: string, needs: readonly string[], batch: RolloutBatch, signals: Signals, T: number): void {
  if (signals.totalTokens !== T) {
    throw new AdvantagesError(
      'invalid_input',
      `signals hold ${signals.totalTokens} tokens per signal but the batch has ${T} completion tokens`,
      { field: 'signals' },
    );
  }
  for (const need of needs) {
    if (!signals.has(need)) {
      const have = signals.names();
      throw new AdvantagesError(
        'missing_signal',
        `estimator ${name} needs signal ${need}; available: ${have.length ? have.join(', ') : '(none)'}`,
        {
          field: need,
        },
      );
    }
    if (signals.shapeOf(need) === 'rollout' && signals.numRollouts !== batch.numRollouts) {
      throw new AdvantagesError(
        'invalid_input',
        `signals hold per-rollout values for ${signals.numRollouts} rollouts but the batch has ${batch.numRollouts}`,
        { field: need },
      );
    }
  }
}

/** [B] the mean advantage of each rollout's tokens (0 for an empty completion). */
function rolloutMeans(batch: RolloutBatch, advantages: Float32Array): Float64Array {
  const out = new Float64Array(batch.numRollouts);
  const o = batch.completionOffsets;
  for (let i = 0; i < batch.numRollouts; i++) {
    let s = 0;
    for (let t = o[i]!; t < o[i + 1]!; t++) s += advantages[t]!;
    out[i] = o[i + 1]! > o[i]! ? s / (o[i + 1]! - o[i]!) : 0;
  }
  return out;
}
