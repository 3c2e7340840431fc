import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ChatTemplate,
  PolicyError,
  loadModelBytes,
  parsePrunedVocab,
  parseRanks,
  prunedTokenizer,
  prunedVocab,
  selectBrowserBackend,
} from './browser.js';
import { loadModel } from './checkpoint.js';
import { QWEN3_TOKENIZER_DIR, TINY_DIR, useBackend } from './test-utils/fixtures.js';

// What a page does with the files it fetched, checked in Node against the Node entry's own readers.
// (The page itself runs in headless Chromium: test/browser.)

const ranksFile = createRequire(import.meta.url).resolve('tiktoken/encoders/cl100k_base.json');

describe('the browser entry, in Node', () => {
  beforeAll(() => useBackend('cpu'));

  it('loadModelBytes reads what loadModel reads', async () => {
    const config = JSON.parse(readFileSync(join(TINY_DIR, 'config.json'), 'utf8'));
    const fromBytes = loadModelBytes(config, new Uint8Array(readFileSync(join(TINY_DIR, 'model.safetensors'))));
    const fromDir = loadModel(TINY_DIR);
    try {
      expect([...fromBytes.params.keys()]).toEqual([...fromDir.params.keys()]);
      for (const [name, v] of fromDir.params) expect(await fromBytes.params.get(name)!.data(), name).toEqual(await v.data());
    } finally {
      fromBytes.dispose();
      fromDir.dispose();
    }
    expect(() => loadModelBytes({ ...config, hidden_size: -1 }, new Uint8Array(8), { files: { config: 'http://h/config.json' } })).toThrow(
      /http:\/\/h\/config\.json/,
    );
    expect(() => loadModelBytes(config, new Uint8Array(3), { files: { weights: 'http://h/model.safetensors' } })).toThrow(
      /http:\/\/h\/model\.safetensors: file shorter than the 8-byte header length/,
    );
  });

  it('a pruned tokenizer from fetched ranks encodes as the one Node reads from the tiktoken package', () => {
    const text = 'Tom has 4 apples. He eats 1.\n4 - 1 = 3\n\\boxed{3}';
    const vocab = parsePrunedVocab(JSON.parse(JSON.stringify(prunedVocab('cl100k_base', [text]))));
    const node = prunedTokenizer(vocab);
    const page = prunedTokenizer(vocab, parseRanks(JSON.parse(readFileSync(ranksFile, 'utf8'))));
    try {
      for (const s of [text, 'unseen text: zebra 987']) {
        expect(page.encode(s)).toEqual(node.encode(s));
        expect(page.decode(page.encode(s))).toBe(s);
      }
    } finally {
      node.free();
      page.free();
    }
    expect(() => parseRanks({} as never)).toThrow(/needs the strings pat_str and bpe_ranks/);
  });

  it('parsePrunedVocab refuses a bad file, naming it', () => {
    const ok = { format: 'rlvr-pruned-tiktoken/1', base: 'cl100k_base', ids: [0], special: {} };
    expect(() => parsePrunedVocab({ ...ok, format: 'x' }, 'v.json')).toThrow(/v\.json: unknown pruned vocabulary format x/);
    expect(() => parsePrunedVocab({ ...ok, base: 'nope' }, 'v.json')).toThrow(/unknown base encoding nope \(known: gpt2/);
    expect(() => parsePrunedVocab({ ...ok, ids: 3 })).toThrow(/tokenizer\.pruned\.json: pruned vocabulary needs ids\[\] and special\{\}/);
    expect(() => parsePrunedVocab(null)).toThrow(PolicyError);
  });

  it('ChatTemplate.fromConfig renders as fromTokenizerConfig', () => {
    const file = join(QWEN3_TOKENIZER_DIR, 'tokenizer_config.json');
    const messages = [{ role: 'user' as const, content: 'What is 2+2?' }];
    expect(ChatTemplate.fromConfig(JSON.parse(readFileSync(file, 'utf8'))).render(messages)).toBe(
      ChatTemplate.fromTokenizerConfig(file).render(messages),
    );
    expect(() => ChatTemplate.fromConfig({}, 'http://h/tokenizer_config.json')).toThrow(
      /http:\/\/h\/tokenizer_config\.json: tokenizer_config\.json has no chat_template/,
    );
  });

  it('selectBrowserBackend without navigator.gpu: webgpu refused in one line, auto falls back to cpu saying why', async () => {
    const had = (globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu;
    expect(had).toBeUndefined(); // Node has no WebGPU of its own (Dawn comes through @rlvr/policy's Node entry)
    await expect(selectBrowserBackend({ backend: 'webgpu' })).rejects.toThrow(
      /^backend webgpu is not available: this browser has no WebGPU \(navigator\.gpu is undefined\)$/,
    );
    const lines: string[] = [];
    const b = await selectBrowserBackend({}, { info: (l) => lines.push(l) });
    expect(b).toEqual({ name: 'cpu', line: lines[0], webgpuUnavailable: 'this browser has no WebGPU (navigator.gpu is undefined)' });
    expect(lines).toEqual([
      'tfjs backend: cpu (@tensorflow/tfjs-backend-cpu; no webgpu: this browser has no WebGPU (navigator.gpu is undefined))',
    ]);
  });
});
