import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHfTokenizer } from './hf.js';
import { MAX_ENCODE_CHARS, MAX_RUN_CHARS, Tokenizer, checkEncodable } from './tokenizer.js';
import { QWEN3_TOKENIZER_DIR } from '../test-utils/fixtures.js';

// Issue 19 item 4: a run of 10^6 letters made tiktoken's wasm abort ("unreachable") and left the
// encoder unusable ("attempted to take ownership of Rust value while it was borrowed").
describe('very long inputs', () => {
  const cl100k = Tokenizer.builtin('cl100k_base');
  const qwen3 = loadHfTokenizer(join(QWEN3_TOKENIZER_DIR, 'tokenizer.json'));
  afterAll(() => {
    cl100k.free();
    qwen3.free();
  });

  it('a run of 10^6 letters, spaces, digits or symbols is refused before any work, naming the run; the encoder still works', () => {
    for (const [text, kind, at] of [
      ['Question: ' + 'a'.repeat(1e6), 'letters', 10],
      [' '.repeat(1e6), 'whitespace characters', 0],
      ['x = ' + '7'.repeat(MAX_RUN_CHARS + 1), 'digits', 4],
      ['ok ' + '!'.repeat(2e5) + ' end', 'symbols', 3],
      ['数学'.repeat(1e4), 'letters', 0],
    ] as const) {
      for (const tok of [cl100k, qwen3]) {
        expect(() => tok.encode(text)).toThrow(
          expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining(`a run of`) }),
        );
        expect(() => tok.encode(text, { allowSpecial: false })).toThrow(
          new RegExp(`run of \\d+ ${kind} at character ${at}, over the tokenizer's limit of ${MAX_RUN_CHARS}`),
        );
      }
    }
    expect(cl100k.decode(cl100k.encode('still fine'))).toBe('still fine');
    expect(qwen3.decode(qwen3.encode('still fine'))).toBe('still fine');
  });

  it('long ordinary text (many short runs) encodes exactly as its parts do; a run at the limit is taken', () => {
    const line = 'Tom has 80 stones. He buys 53 more, then gives away 59.\n';
    const text = line.repeat(4000); // 228k characters
    const ids = cl100k.encode(text);
    const one = cl100k.encode(line);
    expect(ids.length).toBe(one.length * 4000);
    expect(cl100k.decode(ids)).toBe(text);
    expect(cl100k.encode('a'.repeat(MAX_RUN_CHARS)).length).toBeGreaterThan(0);
    expect(() => checkEncodable('a b '.repeat(MAX_RUN_CHARS))).not.toThrow();
  });

  it('a text over maxChars is refused with both numbers; the default is MAX_ENCODE_CHARS', () => {
    expect(() => cl100k.encode('hello world', { maxChars: 5 })).toThrow(
      /text of 11 characters is over the tokenizer's limit of 5 characters/,
    );
    expect(() => checkEncodable({ length: MAX_ENCODE_CHARS + 1 } as string)).toThrow(
      `text of ${MAX_ENCODE_CHARS + 1} characters is over the tokenizer's limit of ${MAX_ENCODE_CHARS} characters`,
    );
  });
});
