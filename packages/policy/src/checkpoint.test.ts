import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel, saveModel } from './checkpoint.js';
import { SafetensorsFile, writeSafetensors } from './safetensors.js';
import { TINY_DIR, useBackend } from './test-utils/fixtures.js';

describe('checkpoints', () => {
  beforeAll(() => useBackend('cpu'));

  it('save -> load reproduces the weights and the config (unknown keys kept), sharded or not', async () => {
    const m = loadModel(TINY_DIR);
    for (const maxShardBytes of [undefined, 100_000]) {
      const dir = mkdtempSync(join(tmpdir(), 'policy-ck-'));
      await saveModel(m, dir, { maxShardBytes });
      const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      expect(cfg.architectures).toEqual(['Qwen3ForCausalLM']);
      expect(cfg.torch_dtype).toBe('float32');
      const back = loadModel(dir);
      for (const [name, v] of m.params) expect(back.param(name).dataSync(), name).toEqual(v.dataSync());
      back.dispose();
    }
    m.dispose();
  });

  it('refuses a checkpoint with a wrong shape, naming tensor, expected and found shapes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-ck-'));
    cpSync(TINY_DIR, dir, { recursive: true });
    const f = SafetensorsFile.open(join(dir, 'model.safetensors'));
    const tensors = new Map([...f.tensors.keys()].map((k) => [k, f.read(k)] as const));
    tensors.set('model.layers.0.self_attn.k_proj.weight', { shape: [64, 64], data: new Float32Array(64 * 64) });
    writeSafetensors(join(dir, 'model.safetensors'), tensors);
    expect(() => loadModel(dir)).toThrow(
      /tensor model\.layers\.0\.self_attn\.k_proj\.weight: wrong shape: expected \[32,64\], found \[64,64\]/,
    );
    tensors.delete('model.layers.0.self_attn.k_proj.weight');
    writeSafetensors(join(dir, 'model.safetensors'), tensors);
    expect(() => loadModel(dir)).toThrow(/k_proj\.weight: missing tensor \(expected shape \[32,64\]\)/);
    writeFileSync(join(dir, 'config.json'), '{"hidden_size": 64');
    expect(() => loadModel(dir)).toThrow(/config\.json: config\.json is not valid JSON/);
    expect(tf.memory().numTensors).toBeGreaterThanOrEqual(0);
  });

  it('a tied config ignores a stored lm_head.weight; an unknown tensor is an error naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-ck-'));
    cpSync(TINY_DIR, dir, { recursive: true });
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...cfg, tie_word_embeddings: true }));
    const tied = loadModel(dir);
    expect(tied.params.has('lm_head.weight')).toBe(false);
    expect(tied.lmHeadWeight()).toBe(tied.param('model.embed_tokens.weight'));
    tied.dispose();
    const f = SafetensorsFile.open(join(dir, 'model.safetensors'));
    const tensors = new Map([...f.tensors.keys()].map((k) => [k, f.read(k)] as const));
    tensors.set('model.layers.0.self_attn.q_proj.bias', { shape: [64], data: new Float32Array(64) });
    writeSafetensors(join(dir, 'model.safetensors'), tensors);
    expect(() => loadModel(dir)).toThrow(
      /unexpected tensors in the checkpoint \(not part of this config\): model\.layers\.0\.self_attn\.q_proj\.bias/,
    );
    expect(tf.memory().numTensors).toBe(0);
  });
});
