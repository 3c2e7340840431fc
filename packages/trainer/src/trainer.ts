import { join } from 'node:path';
import { type RolloutBatch, type PackedRollouts, METRIC, Rng, gatherPacked, packRollouts, parseConfig, planMicroBatches, totalTokens, validateBatch } from '@rlvr/core';
import { CheckpointReader, SafetensorsFile, batchLogprobs, microBatchLogprobs, saveModel, writeSafetensors, type Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { TrainerConfigSchema, type TrainerConfig, type TrainerConfigInput } from './config.js';
import { AdamW, clipGradNorm } from './adamw.js';
import { learningRate } from './schedule.js';
import { clippedSurrogate } from './surrogate.js';
import { aggregate, aggregationScale, type AggregationScale } from './aggregate.js';
import { klPenalty } from './kl.js';
import { selectRollouts, batchMetrics } from './batch-filters.js';
import { TrainerError } from './errors.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { AdvantageRefresh } from './refresh.js';

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

export interface StepResult {
  metrics: Record<string, number>;
}

/** Sums gathered over the micro-batches of a step, turned into metrics at the end. */
interface Tally {
  tokens: number;
  clipLow: number;
  clipHigh: number;
  approxKl: number;
  entropy: number;
  refKl: number;
  loss: number;
  updates: number;
  gradNorm: number;
  /** advantage refreshes, the seconds they took, sum |refreshed - given| and sum |given| over their tokens */
  refreshes: number;
  refreshSeconds: number;
  refreshDiff: number;
  refreshAbs: number;
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
  #rng: Rng;
  /** optimizer steps attempted, skipped ones included (the LR schedule's clock) */
  #steps = 0;
  /** updates skipped because the loss or a gradient was not finite */
  #skipped = 0;

  constructor(model: Qwen3Model, config: TrainerConfigInput = {}, options: { refModel?: Qwen3Model; padId?: number } = {}) {
    this.config = parseConfig(TrainerConfigSchema, config, 'trainer');
    if (this.config.klCoef > 0 && options.refModel === undefined) {
      throw new TrainerError('invalid_config', 'klCoef > 0 needs a frozen reference model (options.refModel)', { field: 'klCoef' });
    }
    this.model = model;
    this.optimizer = new AdamW(this.config.optimizer);
    this.#refModel = options.refModel;
    this.#padId = options.padId ?? 0;
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
   * Runs `epochs` passes of `miniBatches` optimizer steps each.
   */
  step(batch: RolloutBatch, advantages: AdvantageInput, options: StepOptions = {}): StepResult {
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
        throw new TrainerError('invalid_input', 'empty prompt; the first completion token needs at least one prompt token before it', { rollout: i, field: 'prompt' });
      }
      rows.push(i);
      maxLen = Math.max(maxLen, batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
    }
    const tally = emptyTally();
    const skippedBefore = this.#skipped;
    const stepsBefore = this.#steps;
    let firstFault: string | null = null;
    if (rows.length > 0) {
      if (options.oldLogprobs !== undefined && options.oldLogprobs.length !== T) {
        throw new TrainerError('invalid_input', `oldLogprobs has ${options.oldLogprobs.length} values, expected ${T} (one per completion token)`, { field: 'oldLogprobs' });
      }
      const { refresh } = options;
      if (refresh !== undefined && typeof advantages === 'function') {
        throw new TrainerError('invalid_input', 'pass either an advantage callback or options.refresh, not both: both recompute the advantages during the step', { field: 'refresh' });
      }
      const old = options.oldLogprobs ?? this.#oldLogprobs(batch, rows);
      const ref = this.#refModel ? this.#perToken(this.#refModel, batch, rows) : null;
      const given = typeof advantages === 'function' ? null : checkLength(advantages, T, 'advantages');
      for (let pass = 0; pass < cfg.epochs; pass++) {
        let adv = given ?? checkLength((advantages as (pass: number) => Float32Array)(pass), T, 'advantages');
        if (refresh?.every === 'epoch' && pass > 0) adv = this.#refresh(refresh, batch, rows, { pass, miniBatch: 0 }, given!, tally);
        const order = this.#rng.shuffle([...rows]);
        const per = Math.ceil(order.length / cfg.miniBatches);
        for (let m = 0; m < cfg.miniBatches && m * per < order.length; m++) {
          const mb = order.slice(m * per, (m + 1) * per);
          const advMb = refresh?.every === 'minibatch' && (pass > 0 || m > 0) ? this.#refresh(refresh, batch, mb, { pass, miniBatch: m }, given!, tally) : adv;
          const fault = this.#update(batch, mb, advMb, old, ref, maxLen, tally);
          firstFault ??= fault;
        }
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
    if (firstFault !== null) metrics[METRIC.firstNonfiniteParamIndex] = this.#paramIndex(firstFault);
    return { metrics };
  }

  /**
   * The gradients of the step's loss for `rows` (one optimizer step's worth),
   * accumulated over micro-batches: the same as one big batch. For tests and for
   * users who drive their own optimizer. The caller disposes the tensors.
   */
  gradients(batch: RolloutBatch, rows: number[], advantages: Float32Array, oldLogprobs: Float32Array): { loss: number; grads: Map<string, tf.Tensor> } {
    let maxLen = 0;
    for (const i of rows) maxLen = Math.max(maxLen, batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
    const tally = emptyTally();
    return this.#accumulate(batch, rows, advantages, oldLogprobs, null, maxLen, tally);
  }

  /** The refreshed advantages of `rows` (checked), with their change from the given ones in `tally`. */
  #refresh(refresh: AdvantageRefresh, batch: RolloutBatch, rows: readonly number[], ctx: { pass: number; miniBatch: number }, given: Float32Array, tally: Tally): Float32Array {
    const t0 = performance.now();
    const adv = checkLength(refresh.advantages(this.model, batch, rows, ctx), given.length, 'refreshed advantages');
    tally.refreshSeconds += (performance.now() - t0) / 1000;
    tally.refreshes++;
    for (const i of rows) {
      for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++) {
        const a = adv[t]!;
        if (!Number.isFinite(a)) throw new TrainerError('invalid_input', `refreshed advantage of completion token ${t - batch.completionOffsets[i]!} is ${a}`, { rollout: i, field: 'refresh' });
        tally.refreshDiff += Math.abs(a - given[t]!);
        tally.refreshAbs += Math.abs(given[t]!);
      }
    }
    return adv;
  }

  /** Old log-probs per token: the sampler's, or recomputed with the current policy (no gradient). */
  #oldLogprobs(batch: RolloutBatch, rows: number[]): Float32Array {
    if (this.config.oldLogprobs === 'behavior') {
      if (!batch.behaviorLogprobs) throw new TrainerError('invalid_input', "oldLogprobs 'behavior' needs batch.behaviorLogprobs; use 'recompute' or have the sampler record them", { field: 'behaviorLogprobs' });
      return batch.behaviorLogprobs;
    }
    return this.#perToken(this.model, batch, rows);
  }

  /** log-probs of every completion token of `rows` under `model`, scattered into `[T]`. */
  #perToken(model: Qwen3Model, batch: RolloutBatch, rows: number[]): Float32Array {
    return batchLogprobs(model, batch, { tokenBudget: this.config.tokenBudget, padId: this.#padId, include: maskOf(batch.numRollouts, rows), temperature: this.config.temperature }).logprobs;
  }


  /** One optimizer step over `rows`. Returns the name of the first non-finite gradient, if any. */
  #update(batch: RolloutBatch, rows: number[], adv: Float32Array, old: Float32Array, ref: Float32Array | null, maxLen: number, tally: Tally): string | null {
    const cfg = this.config;
    const { loss, grads } = this.#accumulate(batch, rows, adv, old, ref, maxLen, tally);
    const lr = learningRate(cfg.schedule, this.#steps);
    this.#steps++;
    try {
      const { norm, grads: clipped } = clipGradNorm(grads, cfg.maxGradNorm);
      if (!Number.isFinite(loss) || !Number.isFinite(norm)) {
        this.#skipped++;
        if (clipped !== grads) for (const [k, g] of clipped) if (g !== grads.get(k)) g.dispose();
        return this.#firstNonFinite(grads) ?? '(loss)';
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

  /** Loss and summed gradients over the micro-batches of `rows`, scaled by the global counts. */
  #accumulate(batch: RolloutBatch, rows: number[], adv: Float32Array, old: Float32Array, ref: Float32Array | null, maxLen: number, tally: Tally): { loss: number; grads: Map<string, tf.Tensor> } {
    const cfg = this.config;
    const valid = rows.map((i) => batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
    const L = cfg.maxCompletionLength ?? maxLen;
    // TRL's dr_grpo divides by all rows of the (micro-)batch, masked ones included: B / miniBatches per optimizer step
    const scale = aggregationScale(valid, L, cfg.lossConstant ?? (cfg.lossConstantRows === 'all' ? Math.max((batch.numRollouts / cfg.miniBatches) * L, 1) : undefined));
    const names = [...this.model.params.keys()];
    const vars = [...this.model.params.values()];
    const byVarName = new Map(vars.map((v, k) => [v.name, names[k]!]));
    const grads = new Map<string, tf.Tensor>();
    let loss = 0;
    for (const mb of planMicroBatches(batch, cfg.tokenBudget, maskOf(batch.numRollouts, rows))) {
      const packed = packRollouts(batch, mb, this.#padId);
      const kept: tf.Scalar[] = [];
      const { value, grads: g } = tf.variableGrads(() => this.#loss(batch, packed, adv, old, ref, scale, kept), vars);
      loss += value.dataSync()[0]!;
      value.dispose();
      const [clipLow, clipHigh, approxKl, entropy, refKl] = kept.map((t) => t.dataSync()[0]!);
      tf.dispose(kept);
      tally.tokens += sum(packed.completionMask);
      tally.clipLow += clipLow!;
      tally.clipHigh += clipHigh!;
      tally.approxKl += approxKl!;
      tally.entropy += entropy!;
      tally.refKl += refKl ?? 0;
      for (const [varName, t] of Object.entries(g)) {
        const name = byVarName.get(varName)!;
        const prev = grads.get(name);
        if (prev === undefined) grads.set(name, t);
        else {
          grads.set(name, tf.add(prev, t));
          prev.dispose();
          t.dispose();
        }
      }
    }
    return { loss, grads };
  }

  /** The micro-batch's share of the loss; per-token sums for metrics are kept in `kept`. */
  #loss(batch: RolloutBatch, mb: PackedRollouts, adv: Float32Array, old: Float32Array, ref: Float32Array | null, scale: AggregationScale, kept: tf.Scalar[]): tf.Scalar {
    const cfg = this.config;
    const shape: [number, number] = [mb.n, mb.C];
    const { logp, entropy } = microBatchLogprobs(this.model, mb, { temperature: cfg.temperature });
    const mask = tf.tensor2d(mb.completionMask, shape);
    const oldT = tf.tensor2d(gatherPacked(batch, mb, old), shape);
    const terms = clippedSurrogate(logp, oldT, tf.tensor2d(gatherPacked(batch, mb, adv), shape), cfg);
    let total = aggregate(terms.loss, mask, cfg.aggregation, scale);
    const refT = ref ? tf.tensor2d(gatherPacked(batch, mb, ref), shape) : null;
    if (refT && cfg.klCoef > 0) total = tf.add(total, tf.mul(aggregate(klPenalty(logp, refT, cfg.klEstimator), mask, cfg.aggregation, scale), cfg.klCoef));
    if (cfg.entropyCoef > 0) total = tf.sub(total, tf.mul(aggregate(entropy, mask, cfg.aggregation, scale), cfg.entropyCoef));
    const masked = (x: tf.Tensor) => tf.keep(tf.sum(tf.mul(x, mask)) as tf.Scalar);
    kept.push(masked(terms.clippedLow), masked(terms.clippedHigh), masked(klPenalty(logp, oldT, 'k3')), masked(entropy));
    if (refT) kept.push(masked(klPenalty(logp, refT, cfg.klEstimator)));
    return total;
  }

  #firstNonFinite(grads: Map<string, tf.Tensor>): string | null {
    for (const [name, g] of grads) {
      const bad = tf.tidy(() => tf.logicalNot(tf.all(tf.isFinite(g))));
      const isBad = bad.dataSync()[0] === 1;
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
    return store.save({ step: this.#steps, config, state: { ...state, trainer: own } }, async (dir) => {
      saveModel(this.model, join(dir, 'model'));
      const moments = this.optimizer.exportState().tensors;
      writeSafetensors(join(dir, 'optimizer.safetensors'), new Map([...moments].map(([k, t]) => [k, { ...t, dtype: 'F32' as const }])));
    });
  }

  /**
   * Restore what `save` wrote into this trainer's model and optimizer. A checkpoint
   * written with another config is refused, naming the differing fields. Returns the
   * caller's state.
   */
  async restore(store: CheckpointStore, dir: string, config: unknown = this.config): Promise<Record<string, unknown>> {
    const meta = await store.load(dir, config);
    const reader = new CheckpointReader(join(dir, 'model'));
    for (const [name, v] of this.model.params) {
      const t = reader.read(name);
      if (t.shape.join(',') !== v.shape.join(',')) {
        throw new TrainerError('checkpoint_corrupt', `has shape [${t.shape.join(', ')}], the model expects [${v.shape.join(', ')}]`, { file: dir, tensor: name });
      }
      tf.tidy(() => v.assign(tf.tensor(t.data, v.shape, 'float32')));
    }
    const file = SafetensorsFile.open(join(dir, 'optimizer.safetensors'));
    const tensors = new Map([...file.tensors.keys()].map((k) => {
      const t = file.read(k);
      return [k, { shape: t.shape, data: t.data as Float32Array }] as const;
    }));
    const own = meta.state.trainer as { steps: number; skipped: number; rng: number[]; optimizerStep: number };
    this.optimizer.importState(this.model.params, { step: own.optimizerStep, tensors });
    this.#steps = own.steps;
    this.#skipped = own.skipped;
    this.#rng = Rng.fromState(own.rng);
    const { trainer: _own, ...rest } = meta.state;
    return rest;
  }
}

function emptyTally(): Tally {
  return { tokens: 0, clipLow: 0, clipHigh: 0, approxKl: 0, entropy: 0, refKl: 0, loss: 0, updates: 0, gradNorm: 0, refreshes: 0, refreshSeconds: 0, refreshDiff: 0, refreshAbs: 0 };
}

function checkLength(a: Float32Array, T: number, what: string): Float32Array {
  if (a.length !== T) throw new TrainerError('invalid_input', `${what} has ${a.length} values, expected ${T} (one per completion token)`, { field: what === 'advantages' ? 'advantages' : 'refresh' });
  return a;
}

function maskOf(n: number, rows: number[]): boolean[] {
  const m = new Array<boolean>(n).fill(false);
  for (const i of rows) m[i] = true;
  return m;
}

function sum(a: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]!;
  return s;
}
