import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { PolicyError } from './errors.js';

/**
 * The model configuration, with Hugging Face `config.json` field names, so that a real
 * Qwen3 (or Llama) `config.json` parses as is. Unknown keys are kept (and written back on save).
 * Architecture: `model_type` `qwen3` has per-head q/k RMSNorm; `llama`/`qwen2`-style configs do not.
 */
export const ModelConfigSchema = z.looseObject({
  model_type: z.enum(['qwen3', 'llama']).default('qwen3'),
  vocab_size: z.number().int().positive(),
  hidden_size: z.number().int().positive(),
  intermediate_size: z.number().int().positive(),
  num_hidden_layers: z.number().int().positive(),
  num_attention_heads: z.number().int().positive(),
  num_key_value_heads: z.number().int().positive().optional(),
  /** Defaults to hidden_size / num_attention_heads. */
  head_dim: z.number().int().positive().nullish(),
  rms_norm_eps: z.number().positive().default(1e-6),
  rope_theta: z.number().positive().default(10000),
  rope_scaling: z.null().optional(),
  max_position_embeddings: z.number().int().positive().default(4096),
  tie_word_embeddings: z.boolean().default(false),
  hidden_act: z.literal('silu').default('silu'),
  attention_bias: z.literal(false).default(false),
  mlp_bias: z.literal(false).optional(),
  bos_token_id: z.union([z.number().int(), z.null()]).optional(),
  eos_token_id: z.union([z.number().int(), z.array(z.number().int()), z.null()]).optional(),
});

/** A parsed configuration (HF field names; unknown keys kept). */
export type ModelConfig = z.output<typeof ModelConfigSchema>;
/** What callers may pass: defaults filled in by `parseModelConfig`. */
export type ModelConfigInput = z.input<typeof ModelConfigSchema>;

/** Derived sizes used throughout the model. */
export interface ModelDims {
  /** Hidden size D. */
  D: number;
  /** Vocabulary V. */
  V: number;
  /** Query heads H, key/value heads KV, head size hd; G = H / KV queries per KV head. */
  H: number;
  KV: number;
  hd: number;
  G: number;
  /** MLP intermediate size. */
  I: number;
  L: number;
  qkNorm: boolean;
}

/** Parse a config object (e.g. a `config.json`), throwing `PolicyError('invalid_config')` naming each bad field. */
export function parseModelConfig(input: unknown, file?: string): ModelConfig {
  const result = ModelConfigSchema.safeParse(input ?? {});
  if (!result.success) {
    const where = file !== undefined ? { file } : {};
    const unsupported = result.error.issues.some((i) =>
      ['rope_scaling', 'attention_bias', 'mlp_bias', 'hidden_act', 'model_type'].includes(String(i.path[0])),
    );
    throw new PolicyError(
      unsupported ? 'unsupported_config' : 'invalid_config',
      `${unsupported ? 'unsupported' : 'invalid'} model configuration: ${formatZodIssues(result.error.issues)}`,
      where,
      { cause: result.error },
    );
  }
  const c = result.data;
  const dims = modelDims(c);
  if (dims.H % dims.KV !== 0) {
    throw new PolicyError(
      'invalid_config',
      `num_attention_heads (${dims.H}) must be a multiple of num_key_value_heads (${dims.KV})`,
      file !== undefined ? { file } : {},
    );
  }
  if (dims.hd % 2 !== 0) throw new PolicyError('invalid_config', `head_dim (${dims.hd}) must be even for rotary embeddings`);
  return c;
}

export function modelDims(c: ModelConfig): ModelDims {
  const H = c.num_attention_heads;
  return {
    D: c.hidden_size,
    V: c.vocab_size,
    H,
    KV: c.num_key_value_heads ?? H,
    hd: c.head_dim ?? Math.floor(c.hidden_size / H),
    G: H / (c.num_key_value_heads ?? H),
    I: c.intermediate_size,
    L: c.num_hidden_layers,
    qkNorm: c.model_type === 'qwen3',
  };
}

/** Hugging Face tensor names and shapes (`[out, in]` for linear weights) of a config, in checkpoint order. */
export function parameterShapes(c: ModelConfig): Map<string, number[]> {
  const { D, V, H, KV, hd, I, L, qkNorm } = modelDims(c);
  const s = new Map<string, number[]>();
  s.set('model.embed_tokens.weight', [V, D]);
  for (let i = 0; i < L; i++) {
    const p = `model.layers.${i}.`;
    s.set(p + 'input_layernorm.weight', [D]);
    s.set(p + 'self_attn.q_proj.weight', [H * hd, D]);
    s.set(p + 'self_attn.k_proj.weight', [KV * hd, D]);
    s.set(p + 'self_attn.v_proj.weight', [KV * hd, D]);
    s.set(p + 'self_attn.o_proj.weight', [D, H * hd]);
    if (qkNorm) {
      s.set(p + 'self_attn.q_norm.weight', [hd]);
      s.set(p + 'self_attn.k_norm.weight', [hd]);
    }
    s.set(p + 'post_attention_layernorm.weight', [D]);
    s.set(p + 'mlp.gate_proj.weight', [I, D]);
    s.set(p + 'mlp.up_proj.weight', [I, D]);
    s.set(p + 'mlp.down_proj.weight', [D, I]);
  }
  s.set('model.norm.weight', [D]);
  if (!c.tie_word_embeddings) s.set('lm_head.weight', [V, D]);
  return s;
}
