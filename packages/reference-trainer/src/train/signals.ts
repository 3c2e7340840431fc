import { SIGNAL_NAMES, Signals, totalTokens } from '@rlvr/core';
import type { RolloutBatch, SignalName } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { logprobsWithGradXEmb, saliencyBackends } from '@rlvr/saliency';
import { batchLogprobs } from '@rlvr/trainer';
import { ReferenceTrainerError } from '../errors.js';

/** Signals the policy's forward pass gives (no saliency backend needed). */
const POLICY_SIGNALS: readonly SignalName[] = [SIGNAL_NAMES.logprobsOld, SIGNAL_NAMES.entropy];

/** The saliency backend that produces `signal`, or undefined. */
function backendFor(signal: SignalName): string | undefined {
  return saliencyBackends.names().find((n) => {
    const b = saliencyBackends.get(n);
    return b.signal === signal && b.needsModel;
  });
}

/**
 * Check before any work that every signal the estimator `needs` can be produced: a policy
 * signal (old log-probs, entropy) or one a model-running saliency backend registers.
 */
export function checkSignals(estimator: string, needs: readonly SignalName[]): void {
  for (const need of needs) {
    if (POLICY_SIGNALS.includes(need) || backendFor(need) !== undefined) continue;
    const producible = [...POLICY_SIGNALS, ...saliencyBackends.names().flatMap((n) => (saliencyBackends.get(n).needsModel ? [saliencyBackends.get(n).signal] : []))];
    throw new ReferenceTrainerError('invalid_config', `estimator ${estimator} needs signal ${need}, which no saliency backend produces (available: ${[...new Set(producible)].join(', ')})`, { field: 'estimator' });
  }
}

/** What the estimator and the update need from one batch. */
export interface BatchSignals {
  signals: Signals;
  /** `[T]` old log-probs of the completion tokens, when a pass computed them (else the trainer recomputes) */
  oldLogprobs?: Float32Array;
}

/**
 * Compute the signals `needs` lists for `batch` with the current (behaviour) policy.
 * GRAIL's `saliency.gradXEmb` comes from the fused pass, which also yields the old log-probs and
 * entropies; other saliency signals from their backend (options from `saliency[backendName]`);
 * old log-probs or entropy alone from a forward pass (`batchLogprobs` of `@rlvr/trainer`, micro-batched under `pass.tokenBudget`).
 */
export function computeSignals(model: Qwen3Model, batch: RolloutBatch, needs: readonly SignalName[], saliency: Record<string, unknown>, pass: { padId: number; tokenBudget: number }): BatchSignals {
  const T = totalTokens(batch);
  const signals = new Signals(T);
  let oldLogprobs: Float32Array | undefined;
  let entropy: Float32Array | undefined;
  if (needs.includes(SIGNAL_NAMES.gradXEmb)) {
    const fused = logprobsWithGradXEmb(model, batch, (saliency['grad-x-emb'] ?? {}) as never);
    signals.set(SIGNAL_NAMES.gradXEmb, fused.scores);
    oldLogprobs = fused.logprobs;
    entropy = fused.entropy;
  }
  for (const need of needs) {
    if (signals.has(need) || POLICY_SIGNALS.includes(need)) continue;
    const name = backendFor(need)!;
    signals.set(need, saliencyBackends.get(name).compute(model, batch, saliency[name] ?? {}).scores);
  }
  if (needs.some((n) => POLICY_SIGNALS.includes(n)) && (oldLogprobs === undefined || entropy === undefined)) {
    ({ logprobs: oldLogprobs, entropy } = batchLogprobs(model, batch, pass));
  }
  if (needs.includes(SIGNAL_NAMES.logprobsOld)) signals.set(SIGNAL_NAMES.logprobsOld, oldLogprobs!);
  if (needs.includes(SIGNAL_NAMES.entropy)) signals.set(SIGNAL_NAMES.entropy, entropy!);
  return oldLogprobs === undefined ? { signals } : { signals, oldLogprobs };
}
