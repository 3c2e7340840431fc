/**
 * The box finder against the GRAIL reference's box handling, ported independently to Python
 * (`tools/fixtures/core/reference_boxes.py` -> `test/fixtures/reference-boxes.json`): the first
 * balanced `\boxed{` its answer loss uses, and the last box its reward grades, on hand-made hard
 * cases and 300 random completions. Where our rules read otherwise by design, the difference is asserted.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { answerBoxes, findBoxes } from './boxes.js';
import type { Box } from './boxes.js';

type Span = [number, number, number, number];
interface Case {
  text: string;
  first: Span | null;
  last: Span | null;
  lastContent?: string;
  differs?: string;
}
const CASES = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../test/fixtures/reference-boxes.json', import.meta.url)), 'utf8')) as { cases: Case[] }
).cases;
const span = (b: Box | undefined): Span | null => (b === undefined ? null : [b.start, b.contentStart, b.contentEnd, b.end]);
const same = CASES.filter((c) => c.differs === undefined);

describe('findBoxes / answerBoxes against the GRAIL reference', () => {
  test(`the first balanced box (GRAIL's answer loss) on ${same.length} completions`, () => {
    expect(same.filter((c) => c.first !== null).length).toBeGreaterThan(150);
    for (const c of same) {
      const boxes = findBoxes(c.text);
      expect([c.text, span(boxes[0])]).toEqual([c.text, c.first]);
      const a = answerBoxes(c.text, boxes, 'first');
      expect(a === null ? null : span(boxes[a.first])).toEqual(c.first);
    }
  });

  test(`the last box (the reward) on ${same.length} completions`, () => {
    expect(same.filter((c) => c.last !== null && c.first !== null && c.last[0] !== c.first[0]).length).toBeGreaterThan(50);
    for (const c of same) {
      const boxes = findBoxes(c.text);
      const a = answerBoxes(c.text, boxes, 'last');
      expect([c.text, a === null ? null : span(boxes[a.last])]).toEqual([c.text, c.last]);
      if (c.last !== null) expect(c.text.slice(boxes.at(-1)!.contentStart, boxes.at(-1)!.contentEnd)).toBe(c.lastContent);
    }
  });

  test('where our rules differ by design, they do', () => {
    const byText = new Map(CASES.filter((c) => c.differs !== undefined).map((c) => [c.text, c]));
    // an escaped brace is literal for us: the box runs to the last brace; the reference closes at `\}`
    const escaped = byText.get('Answer: \\boxed{a \\} b}.')!;
    expect(escaped.lastContent).toBe('a \\');
    expect(span(findBoxes(escaped.text)[0])).toEqual([8, 15, 21, 22]);
    // \fbox is a box for us: it is our first box, the reference's first is \boxed
    const fbox = byText.get('Thus \\fbox{12} and \\boxed{9}.')!;
    expect(span(findBoxes(fbox.text)[0])).toEqual([5, 11, 13, 14]);
    expect(fbox.first).toEqual([19, 26, 27, 28]);
    // adjacent boxes are one answer for us (graded together, weighted as one span); the reference grades the last alone
    const adjacent = byText.get('The roots are \\boxed{1}, \\boxed{2}.')!;
    expect(answerBoxes(adjacent.text, findBoxes(adjacent.text), 'last')).toEqual({ first: 0, last: 1 });
    expect(adjacent.lastContent).toBe('2');
  });
});
