import type { z } from 'zod';
import type { RolloutBatch, RolloutStage, Signals, SignalName } from '@rlvr/core';

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

/**
 * What a method carries from one step to the next (running statistics, say): JSON values and typed
 * arrays, nested in arrays and plain objects. A trainer checkpoints it (`encodeState`) with the rest
 * of its state, so a resumed run continues with exactly the numbers an uninterrupted one has.
 */
export type EstimatorState =
  | null
  | boolean
  | number
  | string
  | Float32Array
  | Float64Array
  | Int32Array
  | Uint8Array
  | readonly EstimatorState[]
  | { readonly [key: string]: EstimatorState };

/** What an estimator returns for a batch. Shapes: B rollouts, T = totalTokens(batch). */
export interface AdvantageResult {
  /** [T] per-token advantages (a composed estimator's: sequenceAdvantages[i] * weights[t], rounded to float32) */
  advantages: Float32Array;
  /** [T] the token weights (all 1 for `uniform` and for a method that reports none); constants, no gradient flows through them */
  weights: Float32Array;
  /** [B] the sequence advantages (the baseline's; a method that reports none: the mean of its rollout's advantages) */
  sequenceAdvantages: Float64Array;
  metrics: Metrics;
  /** the state to pass to the next step's `estimate` (a stateful method's; absent otherwise) */
  state?: EstimatorState;
}

/** What an advantage method reads for one batch. Shapes: B rollouts, T = totalTokens(batch). */
export interface MethodInput<Config, State extends EstimatorState = EstimatorState> {
  /** the batch; its `rewards` [B] are the verifier's */
  readonly batch: RolloutBatch;
  /** per-token signals ([T]: `signals.get`) and per-rollout ones ([B] or [B, k]: `signals.getPerRollout`), every one in `needs` present */
  readonly signals: Signals;
  /** the parsed options */
  readonly config: Config;
  /** what the previous step's `compute` returned as `state`; undefined on the first step */
  readonly state: State | undefined;
}

/** What an advantage method returns besides the advantages it wrote. */
export interface MethodOutput<State extends EstimatorState = EstimatorState> {
  metrics?: Metrics;
  /** [T] token weights, when the method has them (for the report's heatmaps); default all 1 */
  weights?: Float32Array;
  /** [B] sequence advantages, when the method has them; default the mean of each rollout's advantages */
  sequenceAdvantages?: Float64Array;
  /** the state for the next step (JSON values and typed arrays) */
  state?: State;
}

/**
 * The general contract of a credit-assignment method: it writes the per-token advantages itself,
 * from the batch, the rewards, per-token and per-rollout signals, its options and the state it
 * carried from the previous step. `defineMethod` turns one into a registrable `AdvantageEstimator`;
 * `composeEstimator` (baseline x weighting) is one instance of it.
 */
export interface AdvantageMethod<S extends ConfigSchema = ConfigSchema, State extends EstimatorState = EstimatorState> {
  readonly name: string;
  readonly description: string;
  readonly configSchema: S;
  /** Signals read from `input.signals`, per-token or per-rollout: each is checked present before `compute` runs. */
  readonly needs: readonly SignalName[];
  /**
   * True (the default) when a rollout's advantage may depend on rollouts outside its group, or a
   * function of the parsed options that says so: the CLI then reads its whole input, not group by group.
   */
  readonly batchCoupled?: boolean | ((config: z.output<S>) => boolean);
  /** Write an advantage for every completion token into `out[T]` (not pre-filled) and return the rest. */
  compute(input: MethodInput<z.output<S>, State>, out: Float32Array): MethodOutput<State>;
  /**
   * Optional: after each step's groups are sampled and graded, re-sample some of them on another
   * prompt; the new groups replace the old ones before the signals and `compute` (core's `RolloutStage`).
   */
  readonly rolloutStage?: RolloutStage<z.output<S>>;
}

/**
 * An advantage estimator: what the registry holds and every caller runs. Built from an
 * `AdvantageMethod` (`defineMethod`) or from a sequence baseline and a token weighting
 * (`composeEstimator`, which sets `baseline` and `weighting`).
 */
export interface AdvantageEstimator<S extends ConfigSchema = ConfigSchema> {
  readonly name: string;
  readonly description: string;
  readonly configSchema: S;
  readonly needs: readonly SignalName[];
  readonly batchCoupled: boolean | ((config: z.output<S>) => boolean);
  /** the parts of a composed estimator */
  readonly baseline?: SequenceBaseline;
  readonly weighting?: TokenWeighting;
  /** the method's rollout stage, when it has one (`AdvantageMethod.rolloutStage`) */
  readonly rolloutStage?: RolloutStage<z.output<S>>;
  /**
   * Compute advantages; `config` must come from `configSchema` (see `prepareEstimator`), `state` is the
   * previous step's `result.state` (undefined on the first step, and for a stateless estimator).
   */
  estimate(batch: RolloutBatch, signals: Signals, config: z.output<S>, state?: EstimatorState): AdvantageResult;
}
