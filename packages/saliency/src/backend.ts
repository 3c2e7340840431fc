import type { RolloutBatch, SignalName, SignalShape } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import type { z } from 'zod';
import { parseBackendConfig } from './config.js';
import { SaliencyError } from './errors.js';
import type { FusedResult, SaliencyResult } from './result.js';

/**
 * How a backend runs on policy workers (`computeSignalsOnWorkers`): its result for a rollout depends
 * on that rollout only, so a chunk of the batch gives the rows of the whole batch, and a worker
 * finds it by importing `module` (a file URL or a package name, compiled JavaScript) and reading
 * its export `exportName`. `true`: one of this package's own backends (the workers' registry has it).
 */
export type WorkerPlacement = true | { readonly module: string; readonly exportName: string };

/**
 * A signal backend: policy + rollout batch (+ its answer spans) -> raw scores, per completion
 * token (`shape: 'token'`, `[totalTokens]`) or per rollout (`shape: 'rollout'`, `[B]` or `[B, k]`).
 * One signature for all, so callers (the signal step, the CLI) never branch on the name.
 * Build one with `defineBackend`.
 */
export interface SaliencyBackend {
  readonly name: string;
  /** The core signal the scores stand for (a `precomputed` backend's config may override it). */
  readonly signal: SignalName;
  /** `token` (the default): `scores` is `[totalTokens]`; `rollout`: `[B * width]` (the result's `width`, default 1). */
  readonly shape?: SignalShape;
  /** Present when the backend can run on policy workers (and how a worker finds it); absent: the main thread. */
  readonly onWorkers?: WorkerPlacement;
  /** Whether `compute` runs the policy (false: `model` may be null). */
  readonly needsModel: boolean;
  /**
   * False when the scores do not depend on the policy's parameters (a data backend; a model backend
   * that reads only the tokenizer, or asks a server): a `saliency.refresh` of `epoch` or `minibatch`
   * keeps the behaviour pass's scores rather than computing them again. Absent: true.
   */
  readonly readsParameters?: boolean;
  /** The configuration schema (strict, with defaults). */
  readonly configSchema: z.ZodType;
  /**
   * Present when the result also carries the log-probs and entropies of every completion token
   * (a fused pass): the temperature of those log-probs under `config`. A trainer then uses them
   * as the step's old log-probs instead of running its own forward pass.
   */
  readonly logprobsTemperature?: (config: unknown) => number;
  /** `config` parsed by `configSchema`; a bad one throws `SaliencyError('invalid_config')` naming the field. */
  parseConfig(config: unknown): unknown;
  /**
   * Scores of every completion token of `batch`, `[totalTokens]` (or per rollout, see `shape`).
   * Always a promise: a backend's `run` may be asynchronous (scores from a server, a file), and one
   * signature keeps every caller on one path; a synchronous `run`'s result is the same object.
   */
  compute(model: Qwen3Model | null, batch: RolloutBatch, config?: unknown): Promise<SaliencyResult>;
}

/** What a backend's `run` returns: the result, or a promise of it (scores from a server, say). */
export type MaybePromise<T> = T | Promise<T>;

/** What `defineBackend` needs of a backend that runs the policy. */
export interface ModelBackendSpec<S extends z.ZodType> {
  name: string;
  signal: SignalName;
  configSchema: S;
  /** default `token` */
  shape?: SignalShape;
  onWorkers?: WorkerPlacement;
  /**
   * `false`: the scores depend on the rollouts (and the tokenizer) only, not on the parameters, so a
   * refresh keeps them (a process reward model asked about the text is not asked again). Default: reads them.
   */
  readsParameters?: false;
  /**
   * May return a promise: a backend that reads the policy's tokenizer but asks a server for its
   * scores (a process reward model) is a model backend, since the signal step finds a needed
   * signal's producer among them (`backendFor`). On workers the task awaits it as well.
   */
  run(model: Qwen3Model, batch: RolloutBatch, config: z.output<S>): MaybePromise<SaliencyResult>;
}

/** A fused backend: its result carries log-probs and entropies at its config's `temperature`. */
export interface FusedBackendSpec<S extends z.ZodType<{ temperature: number }>>
  extends Omit<ModelBackendSpec<S>, 'run' | 'readsParameters'> {
  fused: true;
  run(model: Qwen3Model, batch: RolloutBatch, config: z.output<S>): MaybePromise<FusedResult>;
}

/** What `defineBackend` needs of a backend that does not run the policy (scores from elsewhere). */
export interface DataBackendSpec<S extends z.ZodType> {
  name: string;
  signal: SignalName;
  configSchema: S;
  /** default `token` */
  shape?: SignalShape;
  needsModel: false;
  /** may return a promise (scores from elsewhere: a server, a file) */
  run(batch: RolloutBatch, config: z.output<S>): MaybePromise<SaliencyResult>;
}

/**
 * Build a backend from its name, signal, options schema and a typed `run`: options are parsed
 * (strict: a misspelled key is an error naming it) before `run` sees them, and a model backend
 * called without a model is refused. Register the result with `saliencyBackends.register`.
 */
export function defineBackend<S extends z.ZodType<{ temperature: number }>>(spec: FusedBackendSpec<S>): SaliencyBackend;
export function defineBackend<S extends z.ZodType>(spec: ModelBackendSpec<S> | DataBackendSpec<S>): SaliencyBackend;
export function defineBackend(
  spec: ModelBackendSpec<z.ZodType> | DataBackendSpec<z.ZodType> | FusedBackendSpec<z.ZodType<{ temperature: number }>>,
): SaliencyBackend {
  const parse = (config: unknown) => parseBackendConfig(spec.configSchema, config, spec.name);
  const base = { name: spec.name, signal: spec.signal, shape: spec.shape ?? 'token', configSchema: spec.configSchema, parseConfig: parse };
  const placement = 'onWorkers' in spec && spec.onWorkers !== undefined ? { onWorkers: spec.onWorkers } : {};
  // async: a bad config or a missing model rejects the promise rather than throwing at the call
  if ('needsModel' in spec)
    return { ...base, needsModel: false, readsParameters: false, compute: async (_model, batch, config) => spec.run(batch, parse(config)) };
  const needModel = (model: Qwen3Model | null): Qwen3Model => {
    if (model === null) throw new SaliencyError('missing_model', `saliency backend ${spec.name} runs the policy: pass a model`);
    return model;
  };
  if ('fused' in spec) {
    const parseFused = (config: unknown) => parseBackendConfig(spec.configSchema, config, spec.name);
    return {
      ...base,
      ...placement,
      needsModel: true,
      compute: async (model, batch, config) => spec.run(needModel(model), batch, parseFused(config)),
      logprobsTemperature: (config) => parseFused(config).temperature,
    };
  }
  return {
    ...base,
    ...placement,
    needsModel: true,
    ...(spec.readsParameters === false ? { readsParameters: false } : {}),
    compute: async (model, batch, config) => spec.run(needModel(model), batch, parse(config)),
  };
}
