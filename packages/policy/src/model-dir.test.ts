import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveModel } from './checkpoint.js';
import { parseModelConfig } from './config.js';
import { Qwen3Model } from './model.js';
import { defaultEosTokenIds, modelChatTemplate, openPolicyDir } from './model-dir.js';
import { chatmlTemplate, plainChatTemplate } from './tokenizer/chat.js';
import { PRUNED_FILE, prunedVocab } from './tokenizer/pruned.js';
import { savePrunedVocab } from './tokenizer/pruned-file.js';
import { QWEN3_TOKENIZER_DIR, useBackend } from './test-utils/fixtures.js';

const CORPUS = ['Ann has 12 apples. She buys 30 more.', 'The answer is \\boxed{42}.'];
const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];
const opts = { addGenerationPrompt: true, enableThinking: false };

/** A model directory in a temp dir: random weights, a pruned vocabulary with `specials`, config `eos_token_id`. */
async function modelDir(specials: string[], eos: number | number[] | null): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'policy-dir-'));
  const vocab = prunedVocab('gpt2', CORPUS, specials);
  savePrunedVocab(join(dir, PRUNED_FILE), vocab);
  const config = parseModelConfig({
    vocab_size: vocab.ids.length + specials.length,
    hidden_size: 16,
    intermediate_size: 32,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 8,
    max_position_embeddings: 64,
    tie_word_embeddings: true,
    eos_token_id: eos,
  });
  const model = Qwen3Model.random(config, 3);
  await saveModel(model, dir);
  model.dispose();
  return dir;
}

const dirs: string[] = [];
const made = async (specials: string[], eos: number | number[] | null): Promise<string> => {
  const d = await modelDir(specials, eos);
  dirs.push(d);
  return d;
};

beforeAll(() => useBackend('cpu'));
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('openPolicyDir', () => {
  it('opens model, tokenizer, chat template and EOS ids; dispose frees every tensor', async () => {
    const dir = await made(['<|endoftext|>', '<|im_start|>', '<|im_end|>'], 0);
    const before = tf.memory().numTensors;
    const p = openPolicyDir(dir, { trainable: false });
    expect(p.dir).toBe(dir);
    expect(p.model.config.vocab_size).toBe(p.tokenizer.vocabSize);
    expect(p.tokenizer.info.kind).toBe('pruned');
    // config id 0 plus the tokenizer's <|im_end|> and <|endoftext|>, sorted
    const endoftext = p.tokenizer.specialId('<|endoftext|>')!;
    const imEnd = p.tokenizer.specialId('<|im_end|>')!;
    expect(p.eosTokenIds).toEqual([0, endoftext, imEnd]);
    // no tokenizer_config.json, ChatML tokens present: ChatML
    expect(p.chatTemplate.source).toBe('chatml');
    expect(p.chatTemplate.apply).toBe(chatmlTemplate);
    expect(tf.memory().numTensors).toBeGreaterThan(before);
    p.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it("reads tokenizer_config.json's chat_template first (Qwen3's), and takes another tokenizer by spec", async () => {
    const dir = await made(['<|endoftext|>'], 0);
    copyFileSync(join(QWEN3_TOKENIZER_DIR, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
    const p = openPolicyDir(dir, { tokenizer: 'tiktoken:gpt2', requireEos: false });
    try {
      expect(p.chatTemplate.source).toBe('tokenizer_config.json');
      expect(p.chatTemplate.apply!(messages, opts)).toBe(
        '<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
      );
      expect(p.tokenizer.info).toEqual({ kind: 'tiktoken', name: 'gpt2' });
    } finally {
      p.dispose();
    }
  });

  it('without a template or ChatML tokens the caller picks the fallback (source none)', async () => {
    const dir = await made(['<|endoftext|>'], null);
    const p = openPolicyDir(dir);
    try {
      expect(p.chatTemplate).toEqual({ apply: undefined, source: 'none' });
      expect(p.eosTokenIds).toEqual([p.tokenizer.specialId('<|endoftext|>')]);
    } finally {
      p.dispose();
    }
  });

  it('refuses a missing directory, a directory without config.json, a model that cannot end, and leaves nothing allocated', async () => {
    const before = tf.memory().numTensors;
    expect(() => openPolicyDir('/nonexistent/model')).toThrow(/\/nonexistent\/model: model directory not found/);
    const empty = mkdtempSync(join(tmpdir(), 'policy-empty-'));
    dirs.push(empty);
    expect(() => openPolicyDir(empty)).toThrow(
      expect.objectContaining({ code: 'invalid_checkpoint', message: `${empty}: not a model directory (no config.json there)` }),
    );

    // no eos_token_id and no end token in the tokenizer
    const noEos = await made(['<|pad|>'], null);
    expect(() => openPolicyDir(noEos)).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: expect.stringMatching(/config\.json: eos_token_id: the model has no end-of-sequence token/),
      }),
    );
    expect(tf.memory().numTensors).toBe(before);
    const served = openPolicyDir(noEos, { requireEos: false });
    expect(served.eosTokenIds).toEqual([]);
    served.dispose();

    // a tokenizer that does not load, a template that does not parse: the model is freed again
    expect(() => openPolicyDir(noEos, { tokenizer: 'tiktoken:nope' })).toThrow(/unknown tiktoken encoding nope/);
    writeFileSync(join(noEos, 'tokenizer_config.json'), '{"chat_template": "{% if %}"}');
    expect(() => openPolicyDir(noEos, { requireEos: false })).toThrow(/chat template does not parse/);
    writeFileSync(join(noEos, 'tokenizer_config.json'), '{"eos_token": "<|pad|>"}');
    expect(() => openPolicyDir(noEos, { requireEos: false })).toThrow(
      /tokenizer_config\.json: tokenizer_config\.json has no chat_template/,
    );
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('defaultEosTokenIds and modelChatTemplate', () => {
  it('joins a list of config ids with the tokenizer end tokens inside the vocabulary, without repeats', async () => {
    const dir = await made(['<|endoftext|>', '<|im_start|>', '<|im_end|>'], null);
    const p = openPolicyDir(dir);
    try {
      const imEnd = p.tokenizer.specialId('<|im_end|>')!;
      const endoftext = p.tokenizer.specialId('<|endoftext|>')!;
      expect(defaultEosTokenIds({ ...p.model.config, eos_token_id: [5, imEnd, 5] }, p.tokenizer)).toEqual([5, endoftext, imEnd]);
      // an end token outside a smaller embedding table is left out
      expect(defaultEosTokenIds({ ...p.model.config, vocab_size: endoftext, eos_token_id: null }, p.tokenizer)).toEqual([]);
      expect(modelChatTemplate(dir, p.tokenizer).source).toBe('chatml');
    } finally {
      p.dispose();
    }
  });
});

describe('built-in chat templates', () => {
  it('plain: User/Assistant blocks a blank line apart, ending "Assistant:\\n"; ChatML with and without thinking', () => {
    const conv = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Hi' },
      { role: 'assistant' as const, content: 'Hello' },
      { role: 'tool' as const, content: '42' },
    ];
    expect(plainChatTemplate(conv, opts)).toBe('System: Be brief.\n\nUser: Hi\n\nAssistant: Hello\n\nTool: 42\n\nAssistant:\n');
    expect(plainChatTemplate(conv.slice(1, 2), { ...opts, addGenerationPrompt: false })).toBe('User: Hi');
    expect(chatmlTemplate(conv.slice(0, 2), opts)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    expect(chatmlTemplate(conv.slice(1, 2), { ...opts, enableThinking: true })).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
  });
});
