import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AnswerSpansSchema, CoreError, batchFromRows, getSpans } from '@rlvr/core';
import { fillBatchSpans, locateAnswerSpans, spanLocator } from './index.js';
import { vocabFromJson } from './vocab.js';

const enc = new TextEncoder();
const pieces = (...parts: string[]): Uint8Array[] => parts.map((p) => enc.encode(p));
const last = spanLocator();
const first = spanLocator({ which: 'first' });

describe('spanLocator: hand-checked tokenisations', () => {
  it('finds open, content and close tokens of a cleanly split box', () => {
    // 0:"So " 1:"\" 2:"boxed" 3:"{" 4:"1" 5:"4" 6:"}" 7:"."
    expect(last.fromPieces(pieces('So ', '\\', 'boxed', '{', '1', '4', '}', '.'))).toEqual({
      open: [1, 4],
      content: [4, 6],
      close: [6, 7],
    });
  });

  it('gives a token straddling the marker and the content to open, content and close to close', () => {
    // 0:" \boxed" 1:"{1" 2:"4" 3:"}." ; "{1" overlaps O and C -> open; "}." overlaps K -> close
    expect(last.fromPieces(pieces(' \\boxed', '{1', '4', '}.'))).toEqual({ open: [0, 2], content: [2, 3], close: [3, 4] });
    // 0:"\boxed{" 1:"14}" -> content and close share a token: close
    expect(last.fromPieces(pieces('\\boxed{', '14}'))).toEqual({ open: [0, 1], content: [1, 1], close: [1, 2] });
  });

  it('puts a token holding marker, content and brace in open and leaves empty ranges after it', () => {
    expect(last.fromPieces(pieces('x', '\\boxed{3}', 'y'))).toEqual({ open: [1, 2], content: [2, 2], close: [2, 2] });
  });

  it('handles an empty box', () => {
    expect(last.fromPieces(pieces('\\boxed', '{', '}'))).toEqual({ open: [0, 2], content: [2, 2], close: [2, 3] });
  });

  it('takes the last answer by default and the first on request', () => {
    const p = pieces('\\boxed{', '1', '}', ' is wrong, so we try again and get ', '\\boxed{', '2', '}');
    expect(last.fromPieces(p)).toEqual({ open: [4, 5], content: [5, 6], close: [6, 7] });
    expect(first.fromPieces(p)).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
  });

  it('covers an answer of adjacent boxes from the first marker to the last brace, as the grader joins them', () => {
    // "\boxed{1}, \boxed{2}" is one answer (core's answerBoxes): first and last are the same
    const p = pieces('So ', '\\boxed{', '1', '}', ', ', '\\boxed{', '2', '}', '.');
    expect(last.fromPieces(p)).toEqual({ open: [1, 2], content: [2, 7], close: [7, 8] });
    expect(first.fromPieces(p)).toEqual({ open: [1, 2], content: [2, 7], close: [7, 8] });
  });

  it('reads a bare \\boxed 5 as the grader does: no brace, a straddling token closes', () => {
    // the marker is "\\boxed " (spaces included), the content "5"
    expect(last.fromPieces(pieces('so ', '\\boxed', ' ', '5', '$'))).toEqual({ open: [1, 3], content: [3, 4], close: [4, 4] });
    expect(last.fromPieces(pieces('so ', '\\boxed', ' 5', '$'))).toEqual({ open: [1, 3], content: [3, 3], close: [3, 3] });
    // "2$" holds the last content byte and the dollar after it: close
    expect(last.fromPieces(pieces('so ', '\\boxed', ' ', '5', '2$'))).toEqual({ open: [1, 3], content: [3, 4], close: [4, 5] });
    expect(spanLocator({ bare: false }).fromPieces(pieces('so ', '\\boxed', ' 5'))).toBeNull();
  });

  it('skips an unbalanced occurrence and finds a box inside or after it', () => {
    // "\boxed{ \boxed{5}" : the outer marker never closes; the inner box is the answer
    expect(last.fromPieces(pieces('\\boxed{', ' ', '\\boxed{', '5', '}'))).toEqual({ open: [2, 3], content: [3, 4], close: [4, 5] });
    expect(last.fromPieces(pieces('\\boxed{', '5'))).toBeNull();
  });

  it('treats a nested box as part of the outer one (top-level boxes only)', () => {
    expect(last.fromPieces(pieces('\\boxed{', '\\boxed{', '1', '}', '}'))).toEqual({ open: [0, 1], content: [1, 4], close: [4, 5] });
  });

  it('recognises \\fbox and walks nested and escaped braces', () => {
    expect(last.fromPieces(pieces('\\fbox{', '\\frac{1}{2}', '}'))).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
    // \{1,2\} : escaped braces are literal
    expect(last.fromPieces(pieces('\\boxed{', '\\{', '1', '\\}', '}'))).toEqual({ open: [0, 1], content: [1, 4], close: [4, 5] });
    // \boxed{\{} balances: the escaped brace is literal
    expect(last.fromPieces(pieces('\\boxed{', '\\{', '}'))).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
    // the commands are an option; \boxedx{ is not a box
    expect(spanLocator({ commands: ['boxed'] }).fromPieces(pieces('\\fbox{', '1', '}'))).toBeNull();
    expect(last.fromPieces(pieces('\\boxedx{', '1', '}'))).toBeNull();
  });

  it('returns null without a box', () => {
    expect(last.fromPieces(pieces('no ', 'answer ', 'boxed{3}'))).toBeNull();
    expect(last.fromPieces([])).toBeNull();
  });

  it('works in bytes: tokens may split a multi-byte character', () => {
    const pi = enc.encode('π'); // 2 bytes: cf 80
    const p = [enc.encode('\\boxed{'), pi.subarray(0, 1), pi.subarray(1), enc.encode('}')];
    expect(last.fromPieces(p)).toEqual({ open: [0, 1], content: [1, 3], close: [3, 4] });
  });

  it('places empty pieces (special tokens) by their byte position', () => {
    const E = new Uint8Array(0);
    const p = [E, ...pieces('\\boxed{'), E, ...pieces('7'), E, ...pieces('}'), E];
    expect(last.fromPieces(p)).toEqual({ open: [1, 2], content: [2, 5], close: [5, 6] });
  });

  it('reads token ids through a TokenBytes source', () => {
    const vocab = vocabFromJson({ encoding: 'utf8', tokens: ['\\boxed{', '4', '2', '}', '<eos>'], special: [4] });
    expect(locateAnswerSpans([1, 0, 1, 2, 3, 4], vocab)).toEqual({ open: [1, 2], content: [2, 4], close: [4, 5] });
  });

  it('fills the spans of a whole batch, skipping failed rollouts', () => {
    const vocab = vocabFromJson({
      encoding: 'utf8',
      tokens: ['\\boxed{', '4', '}', ' is wrong; the right answer is ', '<eos>'],
      special: [4],
    });
    const batch = batchFromRows([
      { group: 0, completion: [0, 1, 2, 3, 0, 1, 1, 2, 4], reward: 0 },
      { group: 0, completion: [3, 1], reward: 0 },
      { group: 1, completion: [], reward: 0, finish: 'error' },
    ]);
    expect(fillBatchSpans(batch, vocab)).toBe(1);
    expect(getSpans(batch, 0)).toEqual({ open: [4, 5], content: [5, 7], close: [7, 8] });
    expect(getSpans(batch, 1)).toBeNull();
    expect(getSpans(batch, 2)).toBeNull();
    expect(fillBatchSpans(batch, vocab, { which: 'first' })).toBe(1);
    expect(getSpans(batch, 0)).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
  });

  it('rejects bad options with a config error', () => {
    expect(() => spanLocator({ which: 'middle' as 'last' })).toThrow(CoreError);
    expect(() => spanLocator({ commands: ['\\boxed'] })).toThrow(/letters only, without the backslash/);
  });
});

/** Byte regions of the expected box: marker [o, c), content [c, k), brace k. */
interface Case {
  text: string;
  o: number;
  c: number;
  k: number;
}

const plain = fc.constantFrom('a', ' ', '1', '+', '=', 'π', '√', '😀', '\n', '}', '{', '$');
const atom = fc.constantFrom('x', '2', ' ', 'π', '√', '😀', '\\frac', '\\{', '\\}', '\\\\');
const balanced: fc.Arbitrary<string> = fc.letrec<{ b: string }>((tie) => ({
  b: fc
    .array(
      fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        atom,
        tie('b').map((s) => `{${s}}`),
      ),
      { maxLength: 5 },
    )
    .map((xs) => xs.join('')),
})).b;

/** A text whose chosen box is known by construction: other boxes only on the far side. */
function caseArb(which: 'first' | 'last'): fc.Arbitrary<Case> {
  return fc
    .record({
      pre: fc.array(plain, { maxLength: 12 }).map((x) => x.join('')),
      other: fc.boolean(),
      marker: fc.constantFrom('\\boxed{', '\\fbox{'),
      content: balanced,
      post: fc.array(plain, { maxLength: 12 }).map((x) => x.join('')),
    })
    .map(({ pre, other, marker, content, post }) => {
      // another box, far enough not to join the answer (more than five words, no separator)
      const extra = other ? '\\boxed{9} Then we check every single step once more. ' : '';
      const before = (which === 'last' ? extra : '') + pre;
      const after = post + (which === 'first' && other ? ' Then we check every single step once more. \\boxed{9}' : '');
      const o = enc.encode(before).length;
      const c = o + enc.encode(marker).length;
      const k = c + enc.encode(content).length;
      return { text: before + marker + content + '}' + after, o, c, k };
    });
}

/** Cut the text's bytes at arbitrary byte positions (inside characters too) and sprinkle empty pieces. */
function splitArb(c: Case): fc.Arbitrary<{ c: Case; pieces: Uint8Array[] }> {
  const bytes = enc.encode(c.text);
  return fc
    .record({
      cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), { maxLength: bytes.length }),
      empties: fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 3 }),
    })
    .map(({ cuts, empties }) => {
      const points = [...new Set([0, ...cuts.filter((x) => x < bytes.length), bytes.length])].sort((a, b) => a - b);
      const out: Uint8Array[] = [];
      for (let i = 0; i + 1 < points.length; i++) {
        if (empties.includes(points[i]!)) out.push(new Uint8Array(0));
        out.push(bytes.subarray(points[i]!, points[i + 1]!));
      }
      if (empties.includes(bytes.length)) out.push(new Uint8Array(0));
      return { c, pieces: out };
    });
}

/** The slow twin: label each non-empty token by the byte regions it overlaps. */
function labels(pieces: Uint8Array[], { o, c, k }: Case): string[] {
  let at = 0;
  return pieces.map((p) => {
    const s = at;
    at += p.length;
    const e = at;
    if (s === e) return 'empty';
    if (s < c && e > o) return 'open';
    if (s <= k && e > k) return 'close';
    if (s >= c && e <= k) return 'content';
    return e <= o ? 'pre' : 'post';
  });
}

function checkInvariants(which: 'first' | 'last') {
  const loc = spanLocator({ which });
  fc.assert(
    fc.property(caseArb(which).chain(splitArb), ({ c, pieces }) => {
      const s = loc.fromPieces(pieces);
      expect(s).not.toBeNull();
      const spans = s!;
      expect(AnswerSpansSchema.safeParse(spans).success).toBe(true); // ordered, non-overlapping
      expect(spans.close[1]).toBeLessThanOrEqual(pieces.length);
      const starts: number[] = [];
      let at = 0;
      for (const p of pieces) {
        starts.push(at);
        at += p.length;
      }
      const ends = starts.map((x, i) => x + pieces[i]!.length);
      // open covers the marker: its first token starts at or before o, its last ends at or after c
      expect(starts[spans.open[0]]).toBeLessThanOrEqual(c.o);
      expect(ends[spans.open[1] - 1]).toBeGreaterThanOrEqual(c.c);
      // open + content + close covers the whole box, through the closing brace
      expect(ends[spans.close[1] - 1]).toBeGreaterThanOrEqual(c.k + 1);
      // content tokens hold only content bytes
      for (let t = spans.content[0]; t < spans.content[1]; t++) {
        expect(starts[t]).toBeGreaterThanOrEqual(c.c);
        expect(ends[t]).toBeLessThanOrEqual(c.k);
      }
      // every non-empty token lands where its labels say
      labels(pieces, c).forEach((label, t) => {
        const where =
          t < spans.open[0] ? 'pre' : t < spans.open[1] ? 'open' : t < spans.content[1] ? 'content' : t < spans.close[1] ? 'close' : 'post';
        if (label !== 'empty') expect(where, `token ${t}`).toBe(label);
      });
    }),
    { numRuns: 400, seed: 20261202 },
  );
}

describe('spanLocator: property tests over random byte-level token splits', () => {
  it('keeps the documented invariants for the last box', () => checkInvariants('last'));
  it('keeps the documented invariants for the first box', () => checkInvariants('first'));

  it('locates the same box bytes however the text is split', () => {
    fc.assert(
      fc.property(caseArb('last').chain(splitArb), ({ c, pieces }) => {
        const one = last.fromPieces([enc.encode(c.text)]);
        expect(one).toEqual({ open: [0, 1], content: [1, 1], close: [1, 1] });
        // one token per byte: ranges are the byte regions themselves
        const bytes = enc.encode(c.text);
        const perByte = Array.from(bytes, (b) => Uint8Array.of(b));
        expect(last.fromPieces(perByte)).toEqual({ open: [c.o, c.c], content: [c.c, c.k], close: [c.k, c.k + 1] });
        expect(last.fromPieces(pieces)).not.toBeNull();
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});
