import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseModelConfig } from './config.js';
import type { ModelConfig } from './config.js';
import { PolicyError } from './errors.js';
import type { Qwen3Model } from './model.js';
import { modelFromTensors, type LoadOptions } from './model-bytes.js';
import { writeFileAtomicSync } from '@rlvr/core';
import { CheckpointReader, writeCheckpointWeights } from './safetensors.js';
import type { WritableDtype } from './safetensors-format.js';

export const CONFIG_FILE = 'config.json';

/** Read and parse `DIR/config.json`. */
export function readModelConfig(dir: string): ModelConfig {
  const file = join(dir, CONFIG_FILE);
  if (!existsSync(file)) throw new PolicyError('invalid_checkpoint', 'no config.json in the model directory', { file: dir });
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new PolicyError('invalid_config', 'config.json is not valid JSON', { file }, { cause });
  }
  return parseModelConfig(json, file);
}

/**
 * Load a model directory as Hugging Face saves it: `config.json` + `model.safetensors`, or shards
 * with `model.safetensors.index.json`. F32/F16/BF16 weights are read into float32 (see `modelFromTensors`).
 */
export function loadModel(dir: string, options: LoadOptions = {}): Qwen3Model {
  const config = readModelConfig(dir);
  const reader = new CheckpointReader(dir);
  return modelFromTensors(
    config,
    { names: () => reader.names(), has: (n) => reader.info(n) !== undefined, read: (n) => reader.read(n) },
    dir,
    options,
  );
}

export interface SaveOptions {
  /** Stored dtype of the weights (default F32; BF16 halves the size). */
  dtype?: WritableDtype;
  /** Shard when larger than this many bytes (default 5 GiB, Hugging Face's default). */
  maxShardBytes?: number;
}

/**
 * Save a model directory that Hugging Face `from_pretrained` loads: `config.json` (the parsed
 * config, unknown keys kept) and safetensors weights. Every file is written atomically.
 */
export async function saveModel(model: Qwen3Model, dir: string, options: SaveOptions = {}): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const host = await model.toHost();
  const tensors = new Map([...host].map(([k, t]) => [k, { ...t, dtype: options.dtype ?? 'F32' }] as const));
  writeCheckpointWeights(dir, tensors, options);
  const config = {
    ...model.config,
    torch_dtype: (options.dtype ?? 'F32') === 'F32' ? 'float32' : options.dtype === 'BF16' ? 'bfloat16' : 'float16',
  };
  writeFileAtomicSync(join(dir, CONFIG_FILE), [JSON.stringify(config, null, 2) + '\n']);
}
