import { Registry, Signals, type RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import type { SaliencyBackend } from './backend.js';
import { SaliencyError } from './errors.js';
import { gradXEmbBackend } from './grad-x-emb.js';
import { noisyKlBackend } from './noisy-kl.js';
import { perturbationBackend } from './perturbation.js';
import { precomputedBackend } from './precomputed.js';
import type { SaliencyResult } from './result.js';

/** Saliency backends by name. Register your own with `saliencyBackends.register(defineBackend({...}))`. */
export const saliencyBackends = new Registry<SaliencyBackend>('saliency backend');
for (const b of [gradXEmbBackend, noisyKlBackend, perturbationBackend, precomputedBackend]) saliencyBackends.register(b);

/** Store `result` as its signal in `signals`: per token, or per rollout for a backend of that shape. */
export function storeResult(signals: Signals, backend: SaliencyBackend, result: SaliencyResult, signal = result.signal): void {
  if (backend.shape === 'rollout') signals.setPerRollout(signal, result.scores, result.width ?? 1);
  else signals.set(signal, result.scores);
}

/** The backend registered as `name`; an unknown name is a `SaliencyError('invalid_config')` listing the known ones. */
export function getBackend(name: string, field = 'backend'): SaliencyBackend {
  try {
    return saliencyBackends.get(name);
  } catch (cause) {
    throw new SaliencyError('invalid_config', (cause as Error).message, { field }, { cause });
  }
}

/**
 * Run the backend registered as `name` and store its scores as its signal in `signals` (created
 * for the batch when absent). Resolves to the result (with `hasScores` and `missing`) and the signals;
 * an unknown name, bad options or a backend's error reject it.
 */
export async function computeSaliency(
  name: string,
  model: Qwen3Model | null,
  batch: RolloutBatch,
  config: unknown = {},
  signals?: Signals,
): Promise<{ result: SaliencyResult; signals: Signals }> {
  const backend = getBackend(name);
  const result = await backend.compute(model, batch, config);
  const out = signals ?? Signals.forBatch(batch);
  storeResult(out, backend, result);
  return { result, signals: out };
}
