import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelDims, parameterShapes, parseModelConfig } from './config.js';
import type { PolicyError } from './errors.js';
import { FIXTURES } from './test-utils/fixtures.js';

describe('parseModelConfig', () => {
  it("parses Qwen3-0.6B's config.json as is, keeping unknown keys", () => {
    const json = JSON.parse(readFileSync(join(FIXTURES, 'configs/qwen3-0.6b.config.json'), 'utf8'));
    const c = parseModelConfig(json);
    expect(c.max_window_layers).toBe(28);
    expect(c.transformers_version).toBe('4.51.0');
    expect(modelDims(c)).toMatchObject({ D: 1024, H: 16, KV: 8, G: 2, hd: 128, L: 28, V: 151936, qkNorm: true });
    const shapes = parameterShapes(c);
    expect(shapes.get('model.layers.0.self_attn.q_proj.weight')).toEqual([2048, 1024]);
    expect(shapes.has('lm_head.weight')).toBe(false);
    let n = 0;
    for (const s of shapes.values()) n += s.reduce((a, b) => a * b, 1);
    expect(n).toBe(596_049_920); // Qwen3-0.6B: 0.6B parameters with the tied head
  });

  it('defaults head_dim and KV heads like Hugging Face (Llama)', () => {
    const c = parseModelConfig({
      model_type: 'llama',
      vocab_size: 10,
      hidden_size: 64,
      intermediate_size: 8,
      num_hidden_layers: 1,
      num_attention_heads: 4,
    });
    expect(modelDims(c)).toMatchObject({ hd: 16, KV: 4, G: 1, qkNorm: false });
    expect(parameterShapes(c).has('model.layers.0.self_attn.q_norm.weight')).toBe(false);
  });

  it('names bad and unsupported fields', () => {
    const base = { vocab_size: 10, hidden_size: 64, intermediate_size: 8, num_hidden_layers: 1, num_attention_heads: 4 };
    expect(() => parseModelConfig({ ...base, hidden_size: -1 })).toThrow(/hidden_size/);
    expect(() => parseModelConfig({ ...base, num_key_value_heads: 3 })).toThrow(/multiple of num_key_value_heads \(3\)/);
    try {
      parseModelConfig({ ...base, rope_scaling: { type: 'llama3', factor: 8 } }, 'x/config.json');
      expect.unreachable();
    } catch (e) {
      expect((e as PolicyError).code).toBe('unsupported_config');
      expect((e as PolicyError).message).toMatch(/^x\/config\.json: unsupported model configuration: rope_scaling/);
    }
  });
});
