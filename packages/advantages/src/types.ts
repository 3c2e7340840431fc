import type { z } from 'zod';
import type { RolloutBatch, Signals, SignalName } from '@rlvr/core';

/** A configuration schema: a zod object whose keys are the options (camelCase), each with a default. */
export type ConfigSchema = z.ZodObject<z.core.$ZodShape, z.core.$ZodObjectConfig>;

/** Scalar metrics an estimator reports (NaN where a statistic has no members, e.g. no correct rollout). */
export type Metrics = Record<string, number>;

/**
 * A sequence baseline: one scalar advantage per rollout from the rewards.
 * Shapes: B rollouts.
 */
export interface SequenceBaseline<S extends ConfigSchema = ConfigSchema> {
  readonly name: string;
  /** One line for listings (`rlvr-advantages --list`). */
  readonly description: string;
  readonly configSchema: S;
  /**
   * True when a rollout's advantage depends on rollouts outside its group (batch
   * whitening, a batch std), or a function of the parsed options that says so. The CLI
   * then cannot stream group by group and reads its whole input.
   */
  readonly batchCoupled: boolean | ((config: z.output<S>) => boolean);
  /**
   * Write the sequence advantage of every rollout into `out[B]` and return metrics.
   * `config` is already parsed (it may hold other parts' keys as well).
   */
  compute(batch: RolloutBatch, config: z.output<S>, out: Float64Array): Metrics;
}

/**
 * A token weighting: one multiplicative weight per completion token.
 * Shapes: B rollouts, T = totalTokens(batch).
 */
export interface TokenWeighting<S extends ConfigSchema = ConfigSchema> {
  readonly name: string;
  readonly description: string;
  readonly configSchema: S;
  /** Per-token signals read from `Signals` (e.g. `saliency.gradXEmb`). */
  readonly needs: readonly SignalName[];
  /**
   * Write a weight for every completion token into `out[T]` and return metrics.
   * `sequenceAdvantages[B]` is the baseline's output (GRAIL's symmetry reads its sign).
   */
  compute(batch: RolloutBatch, signals: Signals, sequenceAdvantages: Float64Array, config: z.output<S>, out: Float32Array): Metrics;
}

/** What an estimator returns for a batch. Shapes: B rollouts, T = totalTokens(batch). */
export interface AdvantageResult {
  /** [T] per-token advantages: sequenceAdvantages[i] * weights[t], rounded to float32 */
  advantages: Float32Array;
  /** [T] the token weights (all 1 for `uniform`); constants, no gradient flows through them */
  weights: Float32Array;
  /** [B] the baseline's sequence advantages */
  sequenceAdvantages: Float64Array;
  metrics: Metrics;
}

/**
 * An advantage estimator: a sequence baseline composed with a token weighting.
 * `configSchema` is the strict union of both parts' options.
 */
export interface AdvantageEstimator<S extends ConfigSchema = ConfigSchema> {
  readonly name: string;
  readonly description: string;
  readonly configSchema: S;
  readonly needs: readonly SignalName[];
  readonly baseline: SequenceBaseline;
  readonly weighting: TokenWeighting;
  /** Compute advantages; `config` must come from `configSchema` (see `prepareEstimator`). */
  estimate(batch: RolloutBatch, signals: Signals, config: z.output<S>): AdvantageResult;
}
