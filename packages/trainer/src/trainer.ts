import { type RolloutBatch, METRIC, Rng, parseConfig, totalTokens, validateBatch } from '@rlvr/core';
import { batchLogprobs, type PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { TrainerConfigSchema, type TrainerConfig, type TrainerConfigInput } from './config.js';
import { AdamW, clipGradNorm, type AdamWSnapshot } from './adamw.js';
import { learningRate } from './schedule.js';
import { accumulateGradients, emptyTally, lossScale, maskOf, type StepLossInput, type Tally } from './loss.js';
import { parallelGradients, parallelLogprobs, syncSeconds } from './data-parallel.js';
import { selectRollouts, batchMetrics } from './batch-filters.js';
import { TrainerError } from './errors.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { AdvantageRefresh, RefreshContext } from './refresh.js';

/**
 * Per-token advantages `[totalTokens]`: fixed for the whole step, or recomputed
 * for each optimisation pass (`pass` = 0 .. epochs-1) with the current parameters,
 * as the GRAIL reference does with its weights.
 */
export type AdvantageInput = Float32Array | ((pass: number) => Float32Array);

/** Per-call options of `Trainer.step`. */
export interface StepOptions {
  /**
   * Old log-probs `[totalTokens]` computed by the caller with the behaviour policy,
   * e.g. by the fused log-prob + saliency pass of `@rlvr/saliency`. Overrides
   * `config.oldLogprobs` for this step.
   */
  oldLogprobs?: Float32Array;
  /**
   * Recompute the token advantages with the current parameters during the step: before every
   * pass after the first (`every: 'epoch'`) or before every optimizer step after the first
   * (`'minibatch'`, for that mini-batch's rollouts). `advantages` then serves the first update.
   * Not with an advantage callback.
   */
  refresh?: AdvantageRefresh;
}

/** A trainer's state at the start of a step (see `Trainer.step`: all or nothing). */
interface Saved {
  /** with several optimizer steps per call: what they change */
  tensors: { params: Map<string, tf.Tensor>; optimizer: AdamWSnapshot } | null;
  steps: number;
  skipped: number;
  rng: number[];
}

/** What a `Trainer` is built with besides its config. */
export interface TrainerOptions {
  /** frozen reference model of the KL term (needed when klCoef > 0) */
  refModel?: Qwen3Model;
  /** token id of padding (default 0) */
  padId?: number;
  /**
   * Policy workers holding replicas of `model` (`PolicyWorkers.start(model, ...)`): each optimizer
   * step's gradients are then computed data-parallel, the rows split into contiguous chunks, one
   * per worker, and summed here in worker order; the AdamW update runs on `model`. The step's
   * forward-only passes run on them too: the recomputed old log-probs, the reference model's
   * log-probs (its weights published into the replicas for that pass, when it has the policy's
   * config) and the advantage refreshes that can use workers (`AdvantageRefresh.advantagesOnWorkers`).
   * The caller starts and closes them.
   */
  workers?: PolicyWorkers;
}

export interface StepResult {
  metrics: Record<string, number>;
}

/**
 * One policy-gradient update of a `Qwen3Model` from a rollout batch and per-token
 * advantages: clipped surrogate, loss aggregation, optional KL and entropy terms,
 * micro-batching under a token budget with exact accumulation, AdamW, gradient-norm
 * clipping, LR schedule, several passes with the old log-probs fixed.
 * The trainer never looks at which estimator made the advantages.
 */
export class Trainer {
  readonly config: TrainerConfig;
  readonly model: Qwen3Model;
  readonly optimizer: AdamW;
  readonly #refModel: Qwen3Model | undefined;
  readonly #padId: number;
  readonly #workers: PolicyWorkers | undefined;
  /** whether the reference model's pass runs on the policy workers (it has the policy's config) */
  readonly #refOnWorkers: boolean;
  #rng: Rng;
  /** optimizer steps attempted, skipped ones included (the LR schedule's clock) */
  #steps = 0;
  /** updates skipped because the loss or a gradient was not finite */
  #skipped = 0;

  constructor(model: Qwen3Model, config: TrainerConfigInput = {}, options: TrainerOptions = {}) {
    this.config = parseConfig(TrainerConfigSchema, config, 'trainer');
    if (this.config.klCoef > 0 && options.refModel === undefined) {
      throw new TrainerError('invalid_config', 'klCoef > 0 needs a frozen reference model (options.refModel)', { field: 'klCoef' });
    }
    this.model = model;
    this.optimizer = new AdamW(this.config.optimizer);
    this.#refModel = options.refModel;
    this.#padId = options.padId ?? 0;
    this.#workers = options.workers;
    if (options.workers) checkReplicas(options.workers, model);
    this.#refOnWorkers =
      options.workers !== undefined &&
      options.refModel !== undefined &&
      JSON.stringify(options.refModel.config) === JSON.stringify(model.config);
    this.#rng = new Rng(this.config.seed);
  }

  get steps(): number {
    return this.#steps;
  }

  get skippedUpdates(): number {
    return this.#skipped;
  }

  /**
   * Update the policy from `batch` and its per-token `advantages`.
   * Runs `epochs` passes of `miniBatches` optimizer steps each. All or nothing: if anything fails
   * (bad input, a refresh that throws, a policy worker that dies), the parameters, the optimizer
   * state, the counters and the shuffling RNG are as they were before the call. (With several
   * optimizer steps, the parameters and moments of the call's start stay alive until it ends.)
   */
  async step(batch: RolloutBatch, advantages: AdvantageInput, options: StepOptions = {}): Promise<StepResult> {
    const cfg = this.config;
    validateBatch(batch);
    const T = totalTokens(batch);
    const t0 = performance.now();
    const sel = selectRollouts(batch, { maskTruncated: cfg.maskTruncated, filterZeroStd: cfg.filterZeroStd });
    const rows: number[] = [];
    let maxLen = 0;
    for (let i = 0; i < batch.numRollouts; i++) {
      if (!sel.include[i]) continue;
      if (batch.promptOffsets[i + 1]! - batch.promptOffsets[i]! < 1) {
        throw new TrainerError('invalid_input', 'empty prompt; the first completion token needs at least one prompt token before it', {
          rollout: i,
          field: 'prompt',
        });
      }
      rows.push(i);
      maxLen = Math.max(maxLen, batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
    }
    const tally = emptyTally();
    const skippedBefore = this.#skipped;
    const stepsBefore = this.#steps;
    let firstFault: string | null = null;
    // one optimizer step applies at its very end: only several need the old tensors kept for a rollback
    const saved = this.#snapshot(cfg.epochs * cfg.miniBatches > 1);
    try {
      if (rows.length > 0) {
        if (options.oldLogprobs !== undefined && options.oldLogprobs.length !== T) {
          throw new TrainerError(
            'invalid_input',
            `oldLogprobs has ${options.oldLogprobs.length} values, expected ${T} (one per completion token)`,
            { field: 'oldLogprobs' },
          );
        }
        const { refresh } = options;
        if (refresh !== undefined && typeof advantages === 'function') {
          throw new TrainerError(
            'invalid_input',
            'pass either an advantage callback or options.refresh, not both: both recompute the advantages during the step',
            { field: 'refresh' },
          );
        }
        const old = options.oldLogprobs ?? (await this.#oldLogprobs(batch, rows, tally));
        const ref = this.#refModel ? await this.#perToken(this.#refModel, batch, rows, tally) : null;
        const given = typeof advantages === 'function' ? null : checkLength(advantages, T, 'advantages');
        for (let pass = 0; pass < cfg.epochs; pass++) {
          let adv = given ?? checkLength((advantages as (pass: number) => Float32Array)(pass), T, 'advantages');
          if (refresh?.every === 'epoch' && pass > 0)
            adv = await this.#refresh(
              refresh,
              batch,
              rows,
              { pass, miniBatch: 0, padId: this.#padId, tokenBudget: cfg.tokenBudget },
              given!,
              tally,
            );
          const order = this.#rng.shuffle([...rows]);
          const per = Math.ceil(order.length / cfg.miniBatches);
          for (let m = 0; m < cfg.miniBatches && m * per < order.length; m++) {
            const mb = order.slice(m * per, (m + 1) * per);
            const advMb =
              refresh?.every === 'minibatch' && (pass > 0 || m > 0)
                ? await this.#refresh(
                    refresh,
                    batch,
                    mb,
                    { pass, miniBatch: m, padId: this.#padId, tokenBudget: cfg.tokenBudget },
                    given!,
                    tally,
                  )
                : adv;
            const fault = await this.#update(batch, mb, advMb, old, ref, maxLen, tally);
            firstFault ??= fault;
          }
        }
      }
    } catch (e) {
      this.#rollback(saved);
      throw e;
    } finally {
      if (saved.tensors) {
        tf.dispose([...saved.tensors.params.values()]);
        tf.dispose([...saved.tensors.optimizer.moments.values()].flatMap((mo) => [mo.m, mo.v]));
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const n = Math.max(tally.tokens, 1);
    const metrics: Record<string, number> = {
      ...batchMetrics(batch, sel.zeroStdGroups),
      [METRIC.lossPolicy]: tally.updates > 0 ? tally.loss / tally.updates : 0,
      [METRIC.clipLowFrac]: tally.clipLow / n,
      [METRIC.clipHighFrac]: tally.clipHigh / n,
      [METRIC.klApprox]: tally.approxKl / n,
      [METRIC.entropy]: tally.entropy / n,
      [METRIC.gradNorm]: tally.updates > 0 ? tally.gradNorm / tally.updates : 0,
      [METRIC.lr]: learningRate(cfg.schedule, Math.max(this.#steps - 1, 0)),
      [METRIC.tokensPerS]: tally.tokens / Math.max(seconds, 1e-9),
      [METRIC.optimizerSteps]: this.#steps - stepsBefore,
      [METRIC.skippedUpdates]: this.#skipped - skippedBefore,
      [METRIC.filterMaskedTruncated]: sel.maskedTruncated,
      [METRIC.filterZeroStdRollouts]: sel.filteredZeroStd,
      [METRIC.filterErrored]: sel.errored,
      [METRIC.trainedRollouts]: rows.length,
    };
    if (this.#refModel && rows.length > 0) metrics[METRIC.klRef] = tally.refKl / n;
    if (options.refresh !== undefined) {
      metrics[METRIC.refreshCount] = tally.refreshes;
      metrics[METRIC.refreshChange] = tally.refreshAbs > 0 ? tally.refreshDiff / tally.refreshAbs : 0;
      metrics[METRIC.timeRefresh] = tally.refreshSeconds;
    }
    if (this.#workers) {
      metrics[METRIC.timeWeightSync] = tally.weightSyncSeconds;
      metrics[METRIC.timeGradReduce] = tally.gradReduceSeconds;
    }
    if (firstFault !== null) metrics[METRIC.firstNonfiniteParamIndex] = this.#paramIndex(firstFault);
    return { metrics };
  }

  /**
   * The gradients of the step's loss for `rows` (one optimizer step's worth),
   * accumulated over micro-batches: the same as one big batch. For tests and for
   * users who drive their own optimizer. The caller disposes the tensors.
   */
  gradients(
    batch: RolloutBatch,
    rows: number[],
    advantages: Float32Array,
    oldLogprobs: Float32Array,
  ): Promise<{ loss: number; grads: Map<string, tf.Tensor> }> {
    let maxLen = 0;
    for (const i of rows) maxLen = Math.max(maxLen, batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
    return accumulateGradients(this.model, this.#lossInput(batch, rows, advantages, oldLogprobs, null, maxLen), rows, emptyTally());
  }

  /** Host data of one optimizer step's loss over `rows`. */
  #lossInput(
    batch: RolloutBatch,
    rows: readonly number[],
    adv: Float32Array,
    old: Float32Array,
    ref: Float32Array | null,
    maxLen: number,
  ): StepLossInput {
    return { config: this.config, padId: this.#padId, batch, adv, old, ref, scale: lossScale(this.config, batch, rows, maxLen) };
  }

  /**
   * The state a failed step puts back: counters, RNG and, with `tensors`, parameter and moment
   * clones (sharing data: no copy, but the old data stays alive until the step ends).
   */
  #snapshot(tensors: boolean): Saved {
    const kept = tensors
      ? { params: new Map([...this.model.params].map(([k, v]) => [k, tf.clone(v)])), optimizer: this.optimizer.snapshot() }
      : null;
    return { tensors: kept, steps: this.#steps, skipped: this.#skipped, rng: this.#rng.getState() };
  }

  #rollback(saved: Saved): void {
    if (saved.tensors) {
      for (const [k, v] of this.model.params) v.assign(saved.tensors.params.get(k)!);
      this.optimizer.rollback(saved.tensors.optimizer);
    }
    this.#steps = saved.steps;
    this.#skipped = saved.skipped;
    this.#rng = Rng.fromState(saved.rng);
  }

  /**
   * The refreshed advantages of `rows` (checked), with their change from the given ones in `tally`.
   * With policy workers and a refresh that can use them (`advantagesOnWorkers`), the current weights
   * are published first and the refresh runs its model passes on the workers.
   */
  async #refresh(
    refresh: AdvantageRefresh,
    batch: RolloutBatch,
    rows: readonly number[],
    ctx: RefreshContext,
    given: Float32Array,
    tally: Tally,
  ): Promise<Float32Array> {
    const t0 = performance.now();
    const workers = this.#workers;
    let result: Float32Array;
    if (workers !== undefined && refresh.advantagesOnWorkers !== undefined) {
      const sync0 = syncSeconds(workers);
      await workers.publish(this.model);
      result = await refresh.advantagesOnWorkers(workers, this.model, batch, rows, ctx);
      tally.weightSyncSeconds += syncSeconds(workers) - sync0;
    } else {
      result = await refresh.advantages(this.model, batch, rows, ctx);
    }
    const adv = checkLength(result, given.length, 'refreshed advantages');
    tally.refreshSeconds += (performance.now() - t0) / 1000;
    tally.refreshes++;
    for (const i of rows) {
      for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++) {
        const a = adv[t]!;
        if (!Number.isFinite(a))
          throw new TrainerError('invalid_input', `refreshed advantage of completion token ${t - batch.completionOffsets[i]!} is ${a}`, {
            rollout: i,
            field: 'refresh',
          });
        tally.refreshDiff += Math.abs(a - given[t]!);
        tally.refreshAbs += Math.abs(given[t]!);
      }
    }
    return adv;
  }

  /** Old log-probs per token: the sampler's, or recomputed with the current policy (no gradient). */
  async #oldLogprobs(batch: RolloutBatch, rows: number[], tally: Tally): Promise<Float32Array> {
    if (this.config.oldLogprobs === 'behavior') {
      if (!batch.behaviorLogprobs)
        throw new TrainerError(
          'invalid_input',
          "oldLogprobs 'behavior' needs batch.behaviorLogprobs; use 'recompute' or have the sampler record them",
          { field: 'behaviorLogprobs' },
        );
      return batch.behaviorLogprobs;
    }
    return this.#perToken(this.model, batch, rows, tally);
  }

  /**
   * log-probs of every completion token of `rows` under `model` (the policy or the reference),
   * scattered into `[T]`: on the policy workers when they can hold `model` (the reference's weights
   * are published into the replicas for the pass; the update publishes the policy's again).
   */
  async #perToken(model: Qwen3Model, batch: RolloutBatch, rows: number[], tally: Tally): Promise<Float32Array> {
    const pass = { tokenBudget: this.config.tokenBudget, padId: this.#padId, temperature: this.config.temperature };
    if (this.#workers !== undefined && (model === this.model || this.#refOnWorkers))
      return parallelLogprobs(this.#workers, model, batch, rows, pass, tally);
    return (await batchLogprobs(model, batch, { ...pass, include: maskOf(batch.numRollouts, rows) })).logprobs;
  }

  /** One optimizer step over `rows`. Returns the name of the first non-finite gradient, if any. */
  async #update(
    batch: RolloutBatch,
    rows: number[],
    adv: Float32Array,
    old: Float32Array,
    ref: Float32Array | null,
    maxLen: number,
    tally: Tally,
  ): Promise<string | null> {
    const cfg = this.config;
    const input = this.#lossInput(batch, rows, adv, old, ref, maxLen);
    const { loss, grads } = this.#workers
      ? await parallelGradients(this.#workers, this.model, input, rows, tally)
      : await accumulateGradients(this.model, input, rows, tally);
    const lr = learningRate(cfg.schedule, this.#steps);
    this.#steps++;
    try {
      const { norm, grads: clipped } = await clipGradNorm(grads, cfg.maxGradNorm);
      if (!Number.isFinite(loss) || !Number.isFinite(norm)) {
        this.#skipped++;
        if (clipped !== grads) for (const [k, g] of clipped) if (g !== grads.get(k)) g.dispose();
        return (await this.#firstNonFinite(grads)) ?? '(loss)';
      }
      this.optimizer.apply(this.model.params, clipped, lr);
      for (const [k, g] of clipped) if (g !== grads.get(k)) g.dispose();
      tally.loss += loss;
      tally.gradNorm += norm;
      tally.updates++;
      return null;
    } finally {
      for (const g of grads.values()) g.dispose();
    }
  }

  async #firstNonFinite(grads: Map<string, tf.Tensor>): Promise<string | null> {
    for (const [name, g] of grads) {
      const bad = tf.tidy(() => tf.logicalNot(tf.all(tf.isFinite(g))));
      const isBad = (await bad.data())[0] === 1;
      bad.dispose();
      if (isBad) return name;
    }
    return null;
  }

  #paramIndex(name: string): number {
    return [...this.model.params.keys()].indexOf(name);
  }

  /**
   * Save weights (safetensors, loadable by `@rlvr/policy` and Hugging Face), optimizer
   * moments, the step counters and RNG state, plus the caller's `state` (data cursor,
   * its own RNG). `config` is what a resume must match (default: the trainer config).
   */
  async save(store: CheckpointStore, state: Record<string, unknown> = {}, config: unknown = this.config): Promise<string> {
    const own = { steps: this.#steps, skipped: this.#skipped, rng: this.#rng.getState(), optimizerStep: this.optimizer.step };
    // A non-finite value is never saved: the checkpoints on disk stay the good ones (none is pruned for it).
    for (const [name, v] of this.model.params) {
      const bad = firstNonFinite((await v.data()) as Float32Array);
      if (bad !== null) throw nonFinite(`parameter ${name}`, bad, this.#steps);
    }
    const moments = (await this.optimizer.exportState()).tensors;
    for (const [name, t] of moments) {
      const bad = firstNonFinite(t.data);
      if (bad !== null) throw nonFinite(`optimizer state ${name}`, bad, this.#steps);
    }
    return store.save({ step: this.#steps, config, state: { ...state, trainer: own } }, (dir) =>
      store.writeTensors(dir, this.model, moments),
    );
  }

  /**
   * Restore what `save` wrote into this trainer's model and optimizer. A checkpoint
   * written with another config is refused, naming the differing fields. Returns the
   * caller's state.
   */
  async restore(store: CheckpointStore, dir: string, config: unknown = this.config): Promise<Record<string, unknown>> {
    const meta = await store.load(dir, config);
    const { model: reader, optimizer: file } = store.tensorReaders(dir);
    for (const [name, v] of this.model.params) {
      const t = reader.read(name);
      if (firstNonFinite(t.data) !== null) throw corruptValue(reader.fileOf(name), name, t.data);
      if (t.shape.join(',') !== v.shape.join(',')) {
        throw new TrainerError('checkpoint_corrupt', `has shape [${t.shape.join(', ')}], the model expects [${v.shape.join(', ')}]`, {
          file: dir,
          tensor: name,
        });
      }
      tf.tidy(() => v.assign(tf.tensor(t.data, v.shape, 'float32')));
    }
    const tensors = new Map(
      [...file.tensors.keys()].map((k) => {
        const t = file.read(k);
        if (firstNonFinite(t.data) !== null) throw corruptValue(file.path, k, t.data);
        return [k, { shape: t.shape, data: t.data as Float32Array }] as const;
      }),
    );
    const own = meta.state.trainer as { steps: number; skipped: number; rng: number[]; optimizerStep: number };
    this.optimizer.importState(this.model.params, { step: own.optimizerStep, tensors });
    this.#steps = own.steps;
    this.#skipped = own.skipped;
    this.#rng = Rng.fromState(own.rng);
    const { trainer: _own, ...rest } = meta.state;
    return rest;
  }
}

/** Index of the first NaN or infinity in `a`, or null. */
function firstNonFinite(a: Float32Array | Int32Array): number | null {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) return i;
  return null;
}

function nonFinite(what: string, index: number, step: number): TrainerError {
  return new TrainerError(
    'non_finite',
    `${what} holds a non-finite value at index ${index} after step ${step}: not saved (the checkpoints already saved are kept)`,
    { tensor: what.replace(/^(parameter|optimizer state) /, '') },
  );
}

/** A tensor read from a checkpoint with a NaN or infinity in it (written before these checks, or by hand). */
function corruptValue(file: string, tensor: string, data: Float32Array | Int32Array): TrainerError {
  const i = firstNonFinite(data)!;
  return new TrainerError('checkpoint_corrupt', `holds ${data[i]} at index ${i}`, { file, tensor });
}

function checkLength(a: Float32Array, T: number, what: string): Float32Array {
  if (a.length !== T)
    throw new TrainerError('invalid_input', `${what} has ${a.length} values, expected ${T} (one per completion token)`, {
      field: what === 'advantages' ? 'advantages' : 'refresh',
    });
  return a;
}

/** The workers must hold replicas of `model`: the same parameter names and shapes, in the same order. */
function checkReplicas(workers: PolicyWorkers, model: Qwen3Model): void {
  const slots = workers.layout.slots;
  const params = [...model.params];
  const same =
    slots.length === params.length &&
    slots.every((s, k) => s.name === params[k]![0] && s.shape.join(',') === params[k]![1].shape.join(','));
  if (!same)
    throw new TrainerError(
      'invalid_config',
      'the policy workers hold replicas of another model (parameter names or shapes differ): start them with PolicyWorkers.start(model, ...)',
      { field: 'workers' },
    );
}
