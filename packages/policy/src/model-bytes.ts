import { parseModelConfig } from './config.js';
import type { ModelConfig } from './config.js';
import { PolicyError } from './errors.js';
import { Qwen3Model } from './model.js';
import { SafetensorsBytes } from './safetensors-format.js';
import type { HostTensor } from './safetensors-format.js';

export interface LoadOptions {
  /** Variables trainable (default true); false for a frozen reference policy. */
  trainable?: boolean;
}

/** Where a model's tensors come from: a checkpoint directory (Node) or a file in memory (a page). */
interface TensorSource {
  names(): string[];
  has(name: string): boolean;
  read(name: string): HostTensor;
}

/**
 * The model of `config` with the weights of `source`. A tied config may omit `lm_head.weight`; extra
 * tensors are an error unless they are `lm_head.weight` of a tied model (some exporters write it).
 * `file` names the checkpoint in errors.
 */
export function modelFromTensors(config: ModelConfig, source: TensorSource, file: string, options: LoadOptions = {}): Qwen3Model {
  const model = Qwen3Model.fromWeights(config, (name) => (source.has(name) ? source.read(name) : undefined), options);
  const extra = source
    .names()
    .filter((n) => !model.params.has(n) && !(config.tie_word_embeddings && n === 'lm_head.weight') && !n.endsWith('rotary_emb.inv_freq'));
  if (extra.length > 0) {
    model.dispose();
    throw new PolicyError(
      'invalid_checkpoint',
      `unexpected tensors in the checkpoint (not part of this config): ${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ` and ${extra.length - 5} more` : ''}`,
      { file },
    );
  }
  return model;
}

/**
 * A model from files in memory, as a page fetches them: the parsed `config.json` and the bytes of a
 * single `model.safetensors` (F32/F16/BF16 read into float32). `files` names them in errors (URLs, say).
 */
export function loadModelBytes(
  config: unknown,
  weights: Uint8Array | ArrayBuffer,
  options: LoadOptions & { files?: { config?: string; weights?: string } } = {},
): Qwen3Model {
  const cfg = parseModelConfig(config, options.files?.config ?? 'config.json');
  const name = options.files?.weights ?? 'model.safetensors';
  const st = new SafetensorsBytes(weights instanceof Uint8Array ? weights : new Uint8Array(weights), name);
  return modelFromTensors(cfg, { names: () => [...st.tensors.keys()], has: (n) => st.tensors.has(n), read: (n) => st.read(n) }, name, {
    ...(options.trainable === undefined ? {} : { trainable: options.trainable }),
  });
}
