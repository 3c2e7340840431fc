import { describe, expect, it } from 'vitest';
import { answerBoxes, findBoxes } from './boxes.js';

const contents = (text: string, opts = {}): string[] => findBoxes(text, opts).map((b) => text.slice(b.contentStart, b.contentEnd));

describe('findBoxes', () => {
  it('finds outermost balanced boxes, left to right, with their marker and closing brace', () => {
    const text = 'so \\boxed{1} then \\fbox{x^{2}} and \\boxed{\\boxed{3}}';
    const boxes = findBoxes(text);
    expect(boxes.map((b) => text.slice(b.start, b.end))).toEqual(['\\boxed{1}', '\\fbox{x^{2}}', '\\boxed{\\boxed{3}}']);
    expect(boxes.map((b) => text.slice(b.start, b.contentStart))).toEqual(['\\boxed{', '\\fbox{', '\\boxed{']);
    expect(boxes.map((b) => text.slice(b.contentEnd, b.end))).toEqual(['}', '}', '}']);
  });

  it('treats escaped braces as literal and \\\\} as a line break before a closing brace', () => {
    expect(contents('\\boxed{\\{1,2\\}}')).toEqual(['\\{1,2\\}']);
    expect(contents('\\boxed{a\\\\}b}')).toEqual(['a\\\\']);
  });

  it('skips an unbalanced box and keeps scanning inside it, or runs it to the end with unclosedToEnd', () => {
    expect(contents('\\boxed{1 and \\boxed{2}')).toEqual(['2']);
    expect(contents('\\boxed{1 and', { unclosedToEnd: true })).toEqual(['1 and']);
  });

  it('reads bare boxes, spaces before the brace and doubled backslashes; not longer command names', () => {
    expect(contents('\\boxed 5$ and')).toEqual(['5']);
    expect(contents('\\boxed {7}')).toEqual(['7']);
    expect(contents('\\\\boxed{8}')).toEqual(['8']);
    expect(contents('\\boxedanswer{9}')).toEqual([]);
    expect(contents('\\boxed 5', { bare: false })).toEqual([]);
  });

  it('gives byte offsets on UTF-8 bytes that match the string boxes', () => {
    const text = 'é→ \\boxed{ü²} 中 \\boxed{x}';
    const bytes = new TextEncoder().encode(text);
    const dec = new TextDecoder();
    const fromBytes = findBoxes(bytes).map((b) => dec.decode(bytes.subarray(b.contentStart, b.contentEnd)));
    expect(fromBytes).toEqual(contents(text));
  });

  it('stays linear on many unclosed boxes', () => {
    const text = '\\boxed{'.repeat(100_000);
    expect(findBoxes(text)).toEqual([]);
  });
});

describe('answerBoxes', () => {
  it('joins adjacent boxes of one answer, and picks the first or the last answer', () => {
    const text = 'first \\boxed{1}. Later we find \\boxed{2}, \\boxed{3}';
    const boxes = findBoxes(text);
    expect(answerBoxes(text, boxes, 'last')).toEqual({ first: 1, last: 2 });
    expect(answerBoxes(text, boxes, 'first')).toEqual({ first: 0, last: 0 });
    expect(answerBoxes(text, [], 'last')).toBeNull();
  });
});
