// The three model shapes of the scale benchmark, as Hugging Face `config.json` objects (the keys a
// real checkpoint's config carries, unknown ones included, so the loader sees what a user's does).
import { readFileSync } from 'node:fs';
import { BENCH_CONFIG } from '../policy/config.mjs';

const warmup = JSON.parse(readFileSync(new URL('../../../packages/reference-trainer/assets/warmup/config.json', import.meta.url), 'utf8'));

/** Keys every Hugging Face Qwen3 config carries beside the architecture's sizes. */
const hfCommon = {
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  hidden_act: 'silu',
  initializer_range: 0.02,
  model_type: 'qwen3',
  rope_scaling: null,
  sliding_window: null,
  use_sliding_window: false,
  use_cache: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.51.0',
};

export const SHAPES = {
  /** The embedded warm-up checkpoint of @rlvr/reference-trainer (344,112 parameters, tied). */
  '344k': { ...hfCommon, ...warmup, torch_dtype: 'bfloat16' },
  /** The benchmark model of tools/bench/policy (hidden 256, 6 layers, vocab 4096; 9.2M parameters). */
  '9m': { ...hfCommon, ...BENCH_CONFIG, bos_token_id: 0, eos_token_id: 1 },
  /** Qwen3-0.6B's config.json as published (596M parameters, tied embeddings). */
  '0.6b': {
    ...hfCommon,
    bos_token_id: 151643,
    eos_token_id: 151645,
    head_dim: 128,
    hidden_size: 1024,
    intermediate_size: 3072,
    max_position_embeddings: 40960,
    max_window_layers: 28,
    num_attention_heads: 16,
    num_hidden_layers: 28,
    num_key_value_heads: 8,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    tie_word_embeddings: true,
    vocab_size: 151936,
  },
};

/** `--shapes 344k,9m` -> the names, checked. */
export function parseShapes(list) {
  const names = list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const n of names) if (!(n in SHAPES)) throw new Error(`--shapes: unknown shape ${n} (known: ${Object.keys(SHAPES).join(', ')})`);
  return names;
}
