import { parseModelConfig, selectBackend } from '@rlvr/policy';
import { describe, expect, test } from 'vitest';
import { initModel } from './init.js';

const config = parseModelConfig({
  vocab_size: 50,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
});
const weights = (seed: number) => {
  const m = initModel(config, seed);
  const out = new Map([...m.params].map(([k, v]) => [k, v.dataSync().slice() as Float32Array]));
  m.dispose();
  return out;
};

describe('initModel', () => {
  test('the same weights for a seed (0 included) on cpu and wasm; another seed differs; N(0, 0.02^2), norms 1', async () => {
    await selectBackend({ backend: 'cpu' });
    const cpu0 = weights(0);
    await selectBackend({ backend: 'wasm' });
    const wasm0 = weights(0);
    const wasm0b = weights(0);
    const wasm1 = weights(1);
    for (const [name, w] of cpu0) {
      expect(wasm0.get(name), name).toEqual(w);
      expect(wasm0b.get(name), name).toEqual(w);
    }
    const emb = cpu0.get('model.embed_tokens.weight')!;
    expect(wasm1.get('model.embed_tokens.weight')).not.toEqual(emb);
    const mean = emb.reduce((a, x) => a + x, 0) / emb.length;
    const sd = Math.sqrt(emb.reduce((a, x) => a + (x - mean) ** 2, 0) / emb.length);
    expect(Math.abs(mean)).toBeLessThan(0.002);
    expect(sd).toBeGreaterThan(0.018);
    expect(sd).toBeLessThan(0.022);
    expect([...cpu0.get('model.norm.weight')!]).toEqual(new Array(16).fill(1));
  });
});
