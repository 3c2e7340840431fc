import { SIGNAL_NAMES, Signals, takeRollouts, totalTokens, type BoxChoice, type RolloutBatch, type SignalName } from '@rlvr/core';
import { batchLogprobs, type Qwen3Model } from '@rlvr/policy';
import type { SaliencyBackend } from './backend.js';
import { SaliencyError } from './errors.js';
import { getBackend, saliencyBackends, storeResult } from './registry.js';
import type { SaliencyResult } from './result.js';

/** Signals the policy's forward pass gives (no saliency backend needed). */
export const POLICY_SIGNALS: readonly SignalName[] = [SIGNAL_NAMES.logprobsOld, SIGNAL_NAMES.entropy];

/** The model-running backend registered for `signal` (the first by name), or undefined. */
export function backendFor(signal: SignalName): SaliencyBackend | undefined {
  return saliencyBackends
    .names()
    .map((n) => saliencyBackends.get(n))
    .find((b) => b.signal === signal && b.needsModel);
}

/**
 * Check that every signal an estimator `needs` can be produced: a policy signal (old log-probs,
 * entropy) or one a model-running saliency backend registers. Otherwise a
 * `SaliencyError('invalid_config')` naming the estimator, the signal and what is available.
 */
export function checkSignals(needs: readonly SignalName[], estimator = 'the estimator'): void {
  for (const need of needs) {
    if (POLICY_SIGNALS.includes(need) || backendFor(need) !== undefined) continue;
    const producible = [
      ...POLICY_SIGNALS,
      ...saliencyBackends.names().flatMap((n) => (saliencyBackends.get(n).needsModel ? [saliencyBackends.get(n).signal] : [])),
    ];
    throw new SaliencyError(
      'invalid_config',
      `estimator ${estimator} needs signal ${need}, which no saliency backend produces (available: ${[...new Set(producible)].join(', ')})`,
      { field: 'estimator' },
    );
  }
}

/**
 * When the saliency signals (and so the advantages built from them) are computed in a training
 * step: `batch` once with the behaviour policy (fused with the old log-probs); `epoch` again before
 * every pass over the batch after the first; `minibatch` again before every optimizer step after
 * the first, for that mini-batch's rollouts, with the parameters of that moment (the GRAIL
 * reference recomputes its weights at every micro-step).
 */
export const SIGNAL_REFRESH = ['batch', 'epoch', 'minibatch'] as const;
export type SignalRefresh = (typeof SIGNAL_REFRESH)[number];

/**
 * Which `\boxed{...}` of a completion is the answer the saliency signals and the span overrides use
 * (`saliency.box`): the GRAIL reference reads the `first` balanced box for its answer loss and
 * masks (and its OAR-G too), while the reward grades the `last`; later boxes are post-answer tokens.
 */
export const SIGNAL_BOX = ['first', 'last'] as const satisfies readonly BoxChoice[];

/** One backend run of the signal step. */
export interface SignalSource {
  backend: SaliencyBackend;
  /** the signal its scores are stored as */
  signal: SignalName;
  /** its options, parsed (defaults filled) */
  config: unknown;
}

/** The resolved signal step of a training run: which backend produces each needed signal, with which options. */
export interface SignalPlan {
  readonly needs: readonly SignalName[];
  /** the backends to run, in the order of `needs` */
  readonly sources: readonly SignalSource[];
  /** the backend whose log-probs are the step's old log-probs (a fused pass), or null */
  readonly logprobsFrom: string | null;
  /** the temperature of every log-prob of the step (old and new) */
  readonly temperature: number;
  /** the parsed options of every backend the config names, needed or not */
  readonly options: Readonly<Record<string, unknown>>;
  /** when the saliency signals are recomputed during a step (`saliency.refresh`, default `batch`) */
  readonly refresh: SignalRefresh;
  /** the box whose answer spans the step locates (`saliency.box`, default `first`, the GRAIL reference's) */
  readonly box: BoxChoice;
}

/** Options of `parseSignalConfig`. */
export interface SignalConfigOptions {
  /** The trainer's temperature (new log-probs); default 1. */
  temperature?: number;
  /** The estimator, for messages. */
  estimator?: string;
  /** Where the options sit in the caller's config, for messages (default `saliency`). */
  field?: string;
  /** Where the temperature sits in the caller's config, for messages (default `trainer.temperature`). */
  temperatureField?: string;
}

/**
 * Validate the saliency options of a run before anything loads, and resolve its signal step:
 * `saliency` holds options by backend name (`{"grad-x-emb": {"alignment": "own"}}`), each checked
 * by its backend's strict schema (an unknown backend or a misspelled option is an error naming
 * `saliency.NAME.KEY`), `refresh` (`SIGNAL_REFRESH`, default `batch`) and `box` (`SIGNAL_BOX`, default
 * `first`: the answer spans a training step locates, for the saliency loss and the span overrides); every signal in `needs`
 * must be producible (`checkSignals`).
 *
 * One temperature: when a fused backend's log-probs serve as the old log-probs, its `temperature`
 * defaults to `options.temperature` (the trainer's), and a different value is an error naming
 * both fields, since old and new log-probs at different temperatures make the ratio differ from
 * 1 at the old parameters.
 */
export function parseSignalConfig(saliency: unknown, needs: readonly SignalName[], options: SignalConfigOptions = {}): SignalPlan {
  const field = options.field ?? 'saliency';
  const temperature = options.temperature ?? 1;
  if (saliency !== undefined && (saliency === null || typeof saliency !== 'object' || Array.isArray(saliency))) {
    throw new SaliencyError('invalid_config', 'must be an object of options by backend name, e.g. {"grad-x-emb": {"alignment": "own"}}', {
      field,
    });
  }
  const { refresh = 'batch', box = 'first', ...raw } = (saliency ?? {}) as Record<string, unknown>;
  for (const [key, value, allowed] of [
    ['refresh', refresh, SIGNAL_REFRESH],
    ['box', box, SIGNAL_BOX],
  ] as const) {
    if (!(allowed as readonly unknown[]).includes(value)) {
      throw new SaliencyError(
        'invalid_config',
        `must be one of ${allowed.map((r) => JSON.stringify(r)).join(', ')}, got ${JSON.stringify(value)}`,
        { field: `${field}.${key}` },
      );
    }
  }
  checkSignals(needs, options.estimator);
  const sources: { backend: SaliencyBackend; signal: SignalName }[] = [];
  for (const need of needs) {
    if (POLICY_SIGNALS.includes(need)) continue;
    const backend = backendFor(need)!;
    if (!sources.some((s) => s.backend === backend)) sources.push({ backend, signal: need });
  }
  const logprobsFrom = sources.find((s) => s.backend.logprobsTemperature !== undefined)?.backend.name ?? null;
  const parsed: Record<string, unknown> = {};
  for (const name of new Set([...Object.keys(raw), ...sources.map((s) => s.backend.name)])) {
    const backend = getBackend(name, `${field}.${name}`);
    let input = raw[name] ?? {};
    if (name === logprobsFrom && isObject(input) && !('temperature' in input)) input = { ...input, temperature };
    try {
      parsed[name] = backend.parseConfig(input);
    } catch (cause) {
      throw new SaliencyError('invalid_config', (cause as Error).message, { field: `${field}.${name}` }, { cause });
    }
    if (name === logprobsFrom) {
      const t = backend.logprobsTemperature!(parsed[name]);
      if (t !== temperature) {
        const tField = options.temperatureField ?? 'trainer.temperature';
        throw new SaliencyError(
          'invalid_config',
          `is ${t} but ${tField} is ${temperature}: backend ${name}'s log-probs are the step's old log-probs, and old and new log-probs must be at one temperature (set ${tField} to ${t}, or leave ${field}.${name}.temperature unset)`,
          { field: `${field}.${name}.temperature` },
        );
      }
    }
  }
  return {
    needs: [...needs],
    sources: sources.map((s) => ({ ...s, config: parsed[s.backend.name] })),
    logprobsFrom,
    temperature,
    options: parsed,
    refresh: refresh as SignalRefresh,
    box: box as BoxChoice,
  };
}

/** What the estimator and the update need from one batch. */
export interface BatchSignals {
  signals: Signals;
  /** `[T]` old log-probs of the completion tokens, when a pass computed them (else the trainer recomputes) */
  oldLogprobs?: Float32Array;
  /** each backend's result, by name */
  results: Record<string, SaliencyResult>;
}

/**
 * Compute the signals of `plan` for `batch` with the current (behaviour) policy: each source
 * backend once; the old log-probs and entropies from the fused backend's pass when there is one
 * (`plan.logprobsFrom`), else from a forward pass (`batchLogprobs` of `@rlvr/policy`,
 * micro-batched under `pass.tokenBudget`) when the estimator needs them. Asynchronous: a backend
 * may be (`SaliencyBackend.compute`).
 */
export async function computeSignals(
  model: Qwen3Model,
  batch: RolloutBatch,
  plan: SignalPlan,
  pass: { padId: number; tokenBudget: number },
): Promise<BatchSignals> {
  const results: Record<string, SaliencyResult> = {};
  // one backend at a time, in plan order: model backends share the policy (and tfjs' memory)
  for (const { backend, config } of plan.sources) results[backend.name] = await backend.compute(model, batch, config);
  const own = needsPolicyPass(plan) ? await batchLogprobs(model, batch, { ...pass, temperature: plan.temperature }) : null;
  return assembleSignals(batch, plan, results, () => own!);
}

/** Whether `plan` needs a forward pass of its own for the policy signals (no fused backend gives them). */
export function needsPolicyPass(plan: SignalPlan): boolean {
  return plan.logprobsFrom === null && plan.needs.some((n) => POLICY_SIGNALS.includes(n));
}

/** The signals of `plan` from each source backend's result; `policyPass` runs when `needsPolicyPass(plan)`. */
export function assembleSignals(
  batch: RolloutBatch,
  plan: SignalPlan,
  results: Record<string, SaliencyResult>,
  policyPass: () => { logprobs: Float32Array; entropy: Float32Array },
): BatchSignals {
  const signals = Signals.forBatch(batch);
  let oldLogprobs: Float32Array | undefined;
  let entropy: Float32Array | undefined;
  for (const { backend, signal } of plan.sources) {
    const result = results[backend.name]!;
    storeResult(signals, backend, result, signal);
    if (backend.name === plan.logprobsFrom) ({ logprobs: oldLogprobs, entropy } = result);
  }
  if (needsPolicyPass(plan)) ({ logprobs: oldLogprobs, entropy } = policyPass());
  if (plan.needs.includes(SIGNAL_NAMES.logprobsOld)) signals.set(SIGNAL_NAMES.logprobsOld, oldLogprobs!);
  if (plan.needs.includes(SIGNAL_NAMES.entropy)) signals.set(SIGNAL_NAMES.entropy, entropy!);
  return oldLogprobs === undefined ? { signals, results } : { signals, oldLogprobs, results };
}

/**
 * `base` (a batch's signals) with the signals of rollouts `rows` that depend on the parameters
 * recomputed with `model` as it is now, on those rows only: the plan's saliency backends' scores
 * and, when the estimator needs it, `policy.entropy` (from a recomputed fused backend's pass, else
 * from a forward pass, `batchLogprobs` micro-batched under `pass`). Every other value stays as in
 * `base`: the other rows, the scores of backends that do not read the parameters
 * (`readsParameters: false`), and the old log-probs, which must stay the behaviour policy's (the
 * importance ratio's denominator). What a `saliency.refresh` of `epoch` or `minibatch` feeds the estimator.
 */
export async function refreshSignals(
  model: Qwen3Model,
  batch: RolloutBatch,
  rows: readonly number[],
  plan: SignalPlan,
  base: Signals,
  pass: RefreshPass = {},
): Promise<Signals> {
  const sources = refreshedSources(plan);
  if (!refreshesAny(plan) || rows.length === 0) return withRefreshed(batch, rows, null, plan, base, {});
  const sub = takeRollouts(batch, rows);
  const results: Record<string, SaliencyResult> = {};
  for (const { backend, config } of sources) results[backend.name] = await backend.compute(model, sub, config);
  const entropy = refreshNeedsPolicyPass(plan) ? (await batchLogprobs(model, sub, policyPassOptions(plan, pass))).entropy : undefined;
  return withRefreshed(batch, rows, sub, plan, base, results, entropy);
}

/**
 * How a refresh micro-batches its forward pass of the policy signals: the trainer's `padId`
 * (default 0: padding is masked, any valid id) and `tokenBudget` (default 8192, the trainer's default).
 */
export interface RefreshPass {
  padId?: number;
  tokenBudget?: number;
}

/** `batchLogprobs` options of a refresh's policy pass. */
export function policyPassOptions(plan: SignalPlan, pass: RefreshPass): { padId: number; tokenBudget: number; temperature: number } {
  return { padId: pass.padId ?? 0, tokenBudget: pass.tokenBudget ?? 8192, temperature: plan.temperature };
}

/**
 * `base` with the scores of each of the plan's backends in `results` (computed on `sub`, the
 * rollouts `rows` of `batch` taken in that order) written over the tokens of those rows, and so is
 * `policy.entropy` when the plan needs it: `entropy` (`[tokens of sub]`, a policy pass) or else the
 * recomputed fused backend's. What `refreshSignals` returns. `sub` null: nothing was recomputed; a
 * backend absent from `results` keeps its scores.
 */
export function withRefreshed(
  batch: RolloutBatch,
  rows: readonly number[],
  sub: RolloutBatch | null,
  plan: SignalPlan,
  base: Signals,
  results: Record<string, SaliencyResult>,
  entropy?: Float32Array,
): Signals {
  const out = base.clone();
  if (sub === null) return out;
  const scatter = (signal: SignalName, scores: Float32Array) => {
    const values = base.has(signal) ? base.get(signal).slice() : new Float32Array(totalTokens(batch));
    rows.forEach((i, k) =>
      values.set(scores.subarray(sub.completionOffsets[k]!, sub.completionOffsets[k + 1]!), batch.completionOffsets[i]!),
    );
    out.set(signal, values);
  };
  for (const { backend, signal } of plan.sources) {
    if (results[backend.name] === undefined) continue;
    const { scores, width = 1 } = results[backend.name]!;
    if (backend.shape === 'rollout') {
      const had = base.has(signal) ? base.getPerRollout(signal) : null;
      if (had !== null && had.width !== width)
        throw new SaliencyError(
          'invalid_scores',
          `saliency backend ${backend.name} gave ${width} values per rollout for the refreshed rows, but the batch's signal has ${had.width}: a refresh cannot change a per-rollout signal's width (one that depends on the rows, a step count say, is only refreshable whole; if the scores do not depend on the parameters, define the backend with readsParameters: false)`,
          { field: signal },
        );
      const values = had !== null ? had.values.slice() : new Float32Array(batch.numRollouts * width);
      rows.forEach((i, k) => values.set(scores.subarray(k * width, (k + 1) * width), i * width));
      out.setPerRollout(signal, values, width);
      continue;
    }
    scatter(signal, scores);
  }
  const h = entropy ?? (plan.logprobsFrom === null ? undefined : results[plan.logprobsFrom]?.entropy);
  if (plan.needs.includes(SIGNAL_NAMES.entropy) && h !== undefined) scatter(SIGNAL_NAMES.entropy, h);
  return out;
}

/** The plan's sources a refresh runs again: those whose scores depend on the parameters. */
export function refreshedSources(plan: SignalPlan): SignalSource[] {
  return plan.sources.filter((s) => s.backend.readsParameters !== false);
}

/**
 * Whether a refresh needs a forward pass of its own for `policy.entropy`: the estimator needs the
 * entropy and no recomputed fused backend gives it.
 */
export function refreshNeedsPolicyPass(plan: SignalPlan): boolean {
  return plan.needs.includes(SIGNAL_NAMES.entropy) && !refreshedSources(plan).some((s) => s.backend.name === plan.logprobsFrom);
}

/** Whether a refresh recomputes anything for `plan`: a backend that reads the parameters, or `policy.entropy`. */
function refreshesAny(plan: SignalPlan): boolean {
  return refreshedSources(plan).length > 0 || plan.needs.includes(SIGNAL_NAMES.entropy);
}

/**
 * Whether a trainer should refresh the signals of `plan` during a step: `plan.refresh` is `epoch` or
 * `minibatch` and some signal the estimator needs depends on the parameters (a saliency backend that
 * reads them, or `policy.entropy`). Estimators without such signals (`grpo`, process scores) have
 * nothing to recompute.
 */
export function refreshesSignals(plan: SignalPlan): plan is SignalPlan & { refresh: 'epoch' | 'minibatch' } {
  return plan.refresh !== 'batch' && refreshesAny(plan);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
