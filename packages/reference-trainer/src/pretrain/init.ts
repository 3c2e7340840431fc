import { Rng } from '@rlvr/core';
import { Qwen3Model, parameterShapes } from '@rlvr/policy';
import type { ModelConfig } from '@rlvr/policy';

/**
 * A freshly initialised model, the same for a seed on every backend and in every process:
 * RMSNorm weights 1, every other weight N(0, std^2) drawn on the host from `@rlvr/core`'s seeded
 * `Rng` (parameters in checkpoint order, one stream). `Qwen3Model.random` draws with tfjs's
 * `randomNormal`, whose seed 0 means "unseeded" and whose values differ between backends.
 */
export function initModel(config: ModelConfig, seed: number, std = 0.02): Qwen3Model {
  const shapes = parameterShapes(config);
  const rng = new Rng(seed);
  return Qwen3Model.fromWeights(config, (name) => {
    const shape = shapes.get(name)!;
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    if (name.endsWith('norm.weight')) data.fill(1);
    else for (let i = 0; i < size; i++) data[i] = std * rng.normal();
    return { shape, data };
  });
}
