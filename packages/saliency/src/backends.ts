import { Registry, SIGNAL_NAMES, Signals, totalTokens, type RolloutBatch, type SignalName } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import type { z } from 'zod';
import { GradXEmbConfigSchema, NoisyKlConfigSchema, PerturbationConfigSchema, PrecomputedConfigSchema } from './config.js';
import { SaliencyError } from './errors.js';
import { logprobsWithGradXEmb } from './grad-x-emb.js';
import { noisyKl } from './noisy-kl.js';
import { perturbation } from './perturbation.js';
import { precomputed } from './precomputed.js';
import type { SaliencyResult } from './result.js';

/**
 * A saliency backend: policy + rollout batch (+ its answer spans) -> raw per-completion-token
 * scores. One signature for all, so callers (a trainer, the CLI) never branch on the name.
 */
export interface SaliencyBackend {
  readonly name: string;
  /** The core signal the scores stand for (a `precomputed` backend's config may override it). */
  readonly signal: SignalName;
  /** Whether `compute` runs the policy (false: `model` may be null). */
  readonly needsModel: boolean;
  /** The configuration schema, with defaults. */
  readonly configSchema: z.ZodType;
  /** Scores of every completion token of `batch`, `[totalTokens]`; `config` is parsed by `configSchema`. */
  compute(model: Qwen3Model | null, batch: RolloutBatch, config?: unknown): SaliencyResult;
}

function needModel(name: string, model: Qwen3Model | null): Qwen3Model {
  if (model === null) throw new SaliencyError('missing_model', `saliency backend ${name} runs the policy: pass a model`);
  return model;
}

export const gradXEmbBackend: SaliencyBackend = {
  name: 'grad-x-emb',
  signal: SIGNAL_NAMES.gradXEmb,
  needsModel: true,
  configSchema: GradXEmbConfigSchema,
  compute: (model, batch, config) => logprobsWithGradXEmb(needModel('grad-x-emb', model), batch, config as never),
};

export const noisyKlBackend: SaliencyBackend = {
  name: 'noisy-kl',
  signal: SIGNAL_NAMES.noisyKl,
  needsModel: true,
  configSchema: NoisyKlConfigSchema,
  compute: (model, batch, config) => noisyKl(needModel('noisy-kl', model), batch, config as never),
};

export const perturbationBackend: SaliencyBackend = {
  name: 'perturbation',
  signal: SIGNAL_NAMES.perturbation,
  needsModel: true,
  configSchema: PerturbationConfigSchema,
  compute: (model, batch, config) => perturbation(needModel('perturbation', model), batch, config as never),
};

export const precomputedBackend: SaliencyBackend = {
  name: 'precomputed',
  signal: SIGNAL_NAMES.gradXEmb,
  needsModel: false,
  configSchema: PrecomputedConfigSchema,
  compute: (_model, batch, config) => precomputed(batch, config as never),
};

/** Saliency backends by name. Register your own with `saliencyBackends.register(backend)`. */
export const saliencyBackends = new Registry<SaliencyBackend>('saliency backend');
for (const b of [gradXEmbBackend, noisyKlBackend, perturbationBackend, precomputedBackend]) saliencyBackends.register(b);

/**
 * Run the backend registered as `name` and store its scores as its signal in `signals` (created
 * for the batch when absent). Returns the result (with `hasScores` and `missing`) and the signals.
 */
export function computeSaliency(name: string, model: Qwen3Model | null, batch: RolloutBatch, config: unknown = {}, signals?: Signals): { result: SaliencyResult; signals: Signals } {
  let backend: SaliencyBackend;
  try {
    backend = saliencyBackends.get(name);
  } catch (cause) {
    throw new SaliencyError('invalid_config', (cause as Error).message, { field: 'backend' }, { cause });
  }
  const result = backend.compute(model, batch, config);
  const out = signals ?? new Signals(totalTokens(batch));
  out.set(result.signal, result.scores);
  return { result, signals: out };
}
