import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Tokenizer } from './tokenizer.js';
import { PRUNED_FILE, prunedTokenizer, prunedVocab } from './pruned.js';
import { loadPrunedVocab, savePrunedVocab } from './pruned-file.js';
import { loadTokenizer } from './load.js';

const corpus = [
  'Question: what is 12 + 30? Answer: \\boxed{42}',
  'Let x = 7. Then 2x = 14, so \\boxed{14}.',
  'The sum of 3 and 4 is 7.\n\nFinal answer: \\boxed{7}',
];

describe('pruned tokenizer', () => {
  it('keeps bytes + corpus tokens + merge intermediates; the corpus encodes to the same tokens', () => {
    const full = Tokenizer.builtin('cl100k_base');
    const vocab = prunedVocab('cl100k_base', corpus);
    const small = prunedTokenizer(vocab);
    expect(vocab.ids.length).toBeGreaterThan(256);
    expect(vocab.ids.length).toBeLessThan(600);
    expect(small.vocabSize).toBe(vocab.ids.length + 1);
    for (const text of corpus) {
      const a = full.encode(text);
      const b = small.encode(text);
      expect(b.map((i) => vocab.ids[i])).toEqual(a); // same tokens, remapped ids
      expect(small.decode(b)).toBe(text);
    }
    // Unseen text still encodes (down to bytes) and round-trips.
    const other = 'Zebra 😀 ünseen';
    expect(small.decode(small.encode(other))).toBe(other);
    expect(small.encode('<|endoftext|>')).toEqual([vocab.ids.length]);
    full.free();
    small.free();
  });

  it('saves the id remapping next to a checkpoint and loads it back by directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-tok-'));
    const vocab = prunedVocab('cl100k_base', corpus);
    savePrunedVocab(join(dir, PRUNED_FILE), vocab);
    expect(loadPrunedVocab(join(dir, PRUNED_FILE))).toEqual(vocab);
    const t = loadTokenizer(dir);
    expect(t.info.kind).toBe('pruned');
    expect(t.decode(t.encode(corpus[0]))).toBe(corpus[0]);
    t.free();
    expect(() => loadTokenizer('tiktoken:nope')).toThrow(/unknown tiktoken encoding nope \(known: gpt2/);
    expect(() => loadTokenizer(join(dir, 'missing'))).toThrow(/cannot interpret tokenizer spec/);
  });

  it('built-in encodings work with offsets', () => {
    const t = loadTokenizer('tiktoken:o200k_base');
    const ids = t.encode('héllo wörld');
    expect(t.offsets(ids)[ids.length]).toBe(Buffer.byteLength('héllo wörld'));
    t.free();
  });
});
