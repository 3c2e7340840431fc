import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { Qwen3Model } from './model.js';
import { parseModelConfig } from './config.js';
import { selectBackend } from './backend.js';

const config = parseModelConfig({
  vocab_size: 50,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
});

async function weights(seed: number): Promise<Map<string, number[]>> {
  const m = Qwen3Model.random(config, seed);
  const out = new Map([...(await m.toHost())].map(([k, t]) => [k, Array.from(t.data)]));
  m.dispose();
  return out;
}

describe('Qwen3Model.random', () => {
  it('is a function of the seed alone, seed 0 included, on every backend', async () => {
    await selectBackend({ backend: 'cpu' });
    const cpu0 = await weights(0);
    expect(await weights(0)).toEqual(cpu0);
    await selectBackend({ backend: 'wasm' });
    expect(await weights(0)).toEqual(cpu0);
    expect((await weights(1)).get('model.embed_tokens.weight')).not.toEqual(cpu0.get('model.embed_tokens.weight'));
    expect(tf.getBackend()).toBe('wasm');
  });

  it('draws N(0, std^2) weights and unit norms', async () => {
    await selectBackend({ backend: 'cpu' });
    const w = await weights(3);
    expect(new Set(w.get('model.norm.weight'))).toEqual(new Set([1]));
    const e = w.get('model.embed_tokens.weight')!;
    const mean = e.reduce((a, b) => a + b, 0) / e.length;
    const std = Math.sqrt(e.reduce((a, b) => a + (b - mean) ** 2, 0) / e.length);
    expect(Math.abs(mean)).toBeLessThan(0.004); // 800 draws: standard error 0.0007
    expect(std).toBeGreaterThan(0.018);
    expect(std).toBeLessThan(0.022);
  });
});
