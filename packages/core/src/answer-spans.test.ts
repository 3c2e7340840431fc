import { describe, expect, it } from 'vitest';
import { spanLocator, tokenPieces, tokenizerJsonBytes } from './answer-spans.js';
import { CoreError } from './errors.js';

const dec = new TextDecoder();

describe('answer spans from token strings and tokenizer.json (no tokenizer engine)', () => {
  it("byte-level BPE strings read back to GPT-2's bytes: Ġ space, Ċ newline, ĉ tab, Ã© for é", () => {
    const [space, nl, tab, e] = tokenPieces(['Ġthe', 'ĊĊ', 'ĉx', 'cafÃ©'], 'byte-level');
    expect(dec.decode(space)).toBe(' the');
    expect(dec.decode(nl)).toBe('\n\n');
    expect(dec.decode(tab)).toBe('\tx');
    expect(dec.decode(e)).toBe('café');
    expect(() => tokenPieces(['ok', 'a€'], 'byte-level')).toThrow(/token 1 \("a€"\): "€" is not a byte-level BPE character/);
  });

  it('the same spans from decoded token texts, byte-level strings and ids with a tokenizer.json', () => {
    const texts = ['So', ' \\', 'boxed', '{', '1', '4', '}', '.', '<|im_end|>'];
    const byteLevel = ['So', 'Ġ\\', 'boxed', '{', '1', '4', '}', '.'];
    const tokenizer = {
      model: { type: 'BPE', vocab: Object.fromEntries(byteLevel.map((t, i) => [t, i])) },
      added_tokens: [{ id: 8, content: '<|im_end|>', special: true }],
    };
    const want = { open: [1, 4], content: [4, 6], close: [6, 7] };
    const locate = spanLocator();
    // the special token is text when decoded with it, nothing when skipped: the spans are the same
    expect(locate.fromPieces(tokenPieces(texts, 'text'))).toEqual(want);
    expect(locate.fromPieces(tokenPieces(byteLevel, 'byte-level'))).toEqual(want);
    const vocab = tokenizerJsonBytes(tokenizer);
    expect(vocab.size).toBe(9);
    expect(locate.fromTokens([0, 1, 2, 3, 4, 5, 6, 7, 8], vocab)).toEqual(want);
    expect(vocab.tokenBytes(8)).toEqual(new Uint8Array(0));
    expect(locate.fromTokens([0, 7], vocab)).toBeNull();
    expect(() => vocab.tokenBytes(99)).toThrow('token id 99 is not in tokenizer.json');
  });

  it('a file that is not a byte-level BPE tokenizer.json is named', () => {
    const bad = () => tokenizerJsonBytes({ model: { type: 'Unigram', vocab: [['a', 0]] } }, 'tok/tokenizer.json');
    expect(bad).toThrow(CoreError);
    expect(bad).toThrow('not a byte-level BPE tokenizer.json: no model.vocab object of token -> id');
  });
});
