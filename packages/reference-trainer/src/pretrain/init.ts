import { Qwen3Model } from '@rlvr/policy';
import type { ModelConfig } from '@rlvr/policy';

/**
 * A freshly initialised model, the same for a seed on every backend and in every process
 * (`Qwen3Model.random` draws on the host from `@rlvr/core`'s seeded `Rng`).
 */
export function initModel(config: ModelConfig, seed: number, std = 0.02): Qwen3Model {
  return Qwen3Model.random(config, seed, std);
}
