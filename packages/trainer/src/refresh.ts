import type { RolloutBatch } from '@rlvr/core';
import type { PolicyWorkers, Qwen3Model } from '@rlvr/policy';
import { TrainerError } from './errors.js';

/**
 * When `Trainer.step` recomputes the token advantages with the current parameters:
 * - `epoch`: before every pass over the batch after the first, for all its rollouts;
 * - `minibatch`: before every optimizer step after the first, for the rollouts of that step's
 *   mini-batch (the GRAIL reference recomputes its weights at every micro-step).
 * The step's first update always uses the advantages passed to `step`: until then the
 * parameters are those they were computed with.
 */
export type RefreshEvery = 'epoch' | 'minibatch';

/**
 * A refresh described as data, so that another thread (a data-parallel worker with its own copy
 * of the model) can build the same refresh: `(await import(module))[factory](options)`, where
 * `module` is a package name or file URL and `options` is JSON. `resolveRefresh` does exactly that.
 */
export interface RefreshSpec {
  module: string;
  factory: string;
  options: unknown;
}

/** Where in the step a refresh is asked for. */
export interface RefreshContext {
  /** the pass over the batch, 0 .. epochs-1 */
  pass: number;
  /** the optimizer step within the pass, 0 .. miniBatches-1 (0 for `epoch`) */
  miniBatch: number;
  /** the trainer's padding id and `tokenBudget`: how a refresh that runs a forward pass of its own micro-batches it */
  padId: number;
  tokenBudget: number;
}

/**
 * Recomputes per-token advantages during a step, with the model's parameters as they are at that
 * moment. The trainer calls it and never asks what estimator is behind it.
 */
export interface AdvantageRefresh {
  readonly every: RefreshEvery;
  /** how to build this refresh elsewhere (see `RefreshSpec`) */
  readonly spec: RefreshSpec;
  /**
   * Advantages `[totalTokens]` of `batch` for the tokens of `rows` (the trainer reads no other
   * token of the result), computed with `model`'s current parameters. May return a promise (the
   * trainer awaits it): signals from an asynchronous saliency backend (a reward-model server) are.
   */
  advantages(model: Qwen3Model, batch: RolloutBatch, rows: readonly number[], ctx: RefreshContext): Float32Array | Promise<Float32Array>;
  /**
   * Optional: the same advantages with the model passes run on the trainer's policy workers
   * (replicas of `model`, its current weights already published when the trainer calls it). A
   * trainer with workers calls this instead of `advantages` when it is there; with one worker it
   * should give `advantages`'s result bit for bit. A worker failure rejects it, and the step with it.
   */
  advantagesOnWorkers?(
    workers: PolicyWorkers,
    model: Qwen3Model,
    batch: RolloutBatch,
    rows: readonly number[],
    ctx: RefreshContext,
  ): Promise<Float32Array>;
}

/** A factory a `RefreshSpec` names: options (JSON) in, a refresh out. */
export type RefreshFactory = (options: unknown) => AdvantageRefresh | Promise<AdvantageRefresh>;

/**
 * Build the refresh `spec` describes: import its module, call its factory with its options.
 * A module that does not load, a missing factory, or a factory that returns no refresh is a
 * `TrainerError('invalid_config')` naming the module and factory, and so is a factory that throws
 * (on bad options, say).
 */
export async function resolveRefresh(spec: RefreshSpec): Promise<AdvantageRefresh> {
  const where = `refresh factory ${spec.factory} of ${spec.module}`;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(spec.module)) as Record<string, unknown>;
  } catch (cause) {
    throw new TrainerError(
      'invalid_config',
      `cannot load the module of ${where}: ${(cause as Error).message}`,
      { field: 'refresh.module' },
      { cause },
    );
  }
  const factory = mod[spec.factory];
  if (typeof factory !== 'function')
    throw new TrainerError('invalid_config', `${where} is not an exported function`, { field: 'refresh.factory' });
  let refresh: Partial<AdvantageRefresh> | null;
  try {
    refresh = (await (factory as RefreshFactory)(spec.options)) as Partial<AdvantageRefresh> | null;
  } catch (cause) {
    throw new TrainerError('invalid_config', `${where} failed: ${(cause as Error).message}`, { field: 'refresh.options' }, { cause });
  }
  if (
    refresh === null ||
    typeof refresh !== 'object' ||
    typeof refresh.advantages !== 'function' ||
    (refresh.advantagesOnWorkers !== undefined && typeof refresh.advantagesOnWorkers !== 'function') ||
    (refresh.every !== 'epoch' && refresh.every !== 'minibatch')
  ) {
    throw new TrainerError('invalid_config', `${where} did not return an advantage refresh ({ every, spec, advantages })`, {
      field: 'refresh.factory',
    });
  }
  return refresh as AdvantageRefresh;
}
