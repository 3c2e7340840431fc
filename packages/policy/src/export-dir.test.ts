import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from './checkpoint.js';
import { parseModelConfig } from './config.js';
import { PolicyError } from './errors.js';
import { exportModelDir } from './export-dir.js';
import { Qwen3Model } from './model.js';
import { useBackend } from './test-utils/fixtures.js';

const config = parseModelConfig({
  vocab_size: 32,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  max_position_embeddings: 64,
  tie_word_embeddings: true,
});
let root: string;
beforeAll(() => {
  useBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'policy-export-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('exportModelDir', () => {
  it('writes weights, config and the source tokenizer files, replaces an old export, removes stale temporary directories', async () => {
    const from = join(root, 'from');
    mkdirSync(from);
    writeFileSync(join(from, 'tokenizer_config.json'), '{"chat_template": "x"}');
    const out = join(root, 'run');
    for (const d of ['model', 'model.tmp-4242', '.model.tmp-77', 'checkpoints']) mkdirSync(join(out, d), { recursive: true });
    writeFileSync(join(out, 'model', 'old.bin'), 'old');
    const model = Qwen3Model.random(config, 1);
    await exportModelDir(model, join(out, 'model'), from);
    expect(readdirSync(out).sort()).toEqual(['checkpoints', 'model']);
    expect(readdirSync(join(out, 'model')).sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer_config.json']);
    expect(readFileSync(join(out, 'model', 'tokenizer_config.json'), 'utf8')).toBe('{"chat_template": "x"}');
    const back = loadModel(join(out, 'model'));
    expect([...(await back.toHost()).values()].map((t) => Array.from(t.data))).toEqual(
      [...(await model.toHost()).values()].map((t) => Array.from(t.data)),
    );
    back.dispose();
    model.dispose();
  });

  it('a failure leaves no temporary directory and names the directory', async () => {
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const model = Qwen3Model.random(config, 2);
    // the parent is a file: nothing can be written under it
    await expect(exportModelDir(model, join(blocker, 'model'), root)).rejects.toSatisfy(
      (e: unknown) => e instanceof PolicyError && e.code === 'write_failed' && e.message.includes(join(blocker, 'model')),
    );
    expect(existsSync(join(blocker, '.model.tmp-' + process.pid))).toBe(false);
    model.dispose();
  });
});
