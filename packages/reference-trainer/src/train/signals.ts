import { SIGNAL_NAMES, Signals, packRollouts, planMicroBatches, scatterPacked, totalTokens } from '@rlvr/core';
import type { RolloutBatch, SignalName } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { logprobsWithGradXEmb, saliencyBackends } from '@rlvr/saliency';
import { microBatchLogprobs } from '@rlvr/trainer';
import { ReferenceTrainerError } from '../errors.js';
import { tf } from '../tf.js';

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
 * old log-probs or entropy alone from a forward pass.
 */
export function computeSignals(model: Qwen3Model, batch: RolloutBatch, needs: readonly SignalName[], saliency: Record<string, unknown>, padId: number): BatchSignals {
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
    ({ logprobs: oldLogprobs, entropy } = forwardPass(model, batch, padId));
  }
  if (needs.includes(SIGNAL_NAMES.logprobsOld)) signals.set(SIGNAL_NAMES.logprobsOld, oldLogprobs!);
  if (needs.includes(SIGNAL_NAMES.entropy)) signals.set(SIGNAL_NAMES.entropy, entropy!);
  return oldLogprobs === undefined ? { signals } : { signals, oldLogprobs };
}

/** Log-probs and entropies `[T]` of every completion token, forward only. */
function forwardPass(model: Qwen3Model, batch: RolloutBatch, padId: number): { logprobs: Float32Array; entropy: Float32Array } {
  const T = totalTokens(batch);
  const logprobs = new Float32Array(T);
  const entropy = new Float32Array(T);
  for (const rows of planMicroBatches(batch, 8192)) {
    const packed = packRollouts(batch, rows, padId);
    const { logp, entropy: h } = microBatchLogprobs(model, packed);
    scatterPacked(batch, packed, logp.dataSync(), logprobs);
    scatterPacked(batch, packed, h.dataSync(), entropy);
    tf.dispose([logp, h]);
  }
  return { logprobs, entropy };
}
