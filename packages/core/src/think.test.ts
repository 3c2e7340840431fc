import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { finalBoxUnclosed } from './boxes.js';
import { DEFAULT_THINK_TAGS, answerStart } from './think.js';

const enc = new TextEncoder();
const T = DEFAULT_THINK_TAGS;
/** The answer part of `text` as a string, or null for a block that never closes. */
const part = (text: string, tags = T): string | null => {
  const at = answerStart(text, tags);
  return at < 0 ? null : text.slice(at);
};

describe('answerStart: where the final answer of a reasoning model may be', () => {
  it('reads after the last closing tag, so a draft box inside the block is not in the answer part', () => {
    expect(part('<think>maybe \\boxed{5}?</think> The answer is \\boxed{6}.')).toBe(' The answer is \\boxed{6}.');
    expect(part('<think>a</think> b <think>c</think> d')).toBe(' d');
    expect(part('<thinking>\\boxed{1}</thinking>\\boxed{2}')).toBe('\\boxed{2}');
    // the chat template opened the block: only its close is in the completion
    expect(part('so \\boxed{5}</think>\n\\boxed{6}')).toBe('\n\\boxed{6}');
  });

  it('reads the whole text when no tag occurs, and an empty part after a final close', () => {
    expect(answerStart('\\boxed{5}', T)).toBe(0);
    expect(part('<think>\\boxed{5}</think>')).toBe('');
    expect(answerStart('<think>x</think>', [])).toBe(0);
    expect(answerStart('<think>x', [])).toBe(0);
  });

  it('has no answer part when a block opens and never closes, even with boxes after the open tag', () => {
    expect(answerStart('<think>so far \\boxed{5}, now the second case', T)).toBe(-1);
    expect(answerStart('<think>a</think> b <think> \\boxed{2}', T)).toBe(-1);
    expect(answerStart('<thinking> \\boxed{2}', T)).toBe(-1);
  });

  it('ends an unclosed block at an <answer> tag after it', () => {
    expect(part('<think>reasoning \\boxed{4}<answer>\\boxed{5}</answer>')).toBe('<answer>\\boxed{5}</answer>');
    // an <answer> before the open tag does not end it
    expect(answerStart('<answer>1</answer><think>\\boxed{4}', T)).toBe(-1);
  });

  it('gives byte offsets on UTF-8 bytes, for tags with non-ASCII characters too', () => {
    const text = 'π≈3 <think>√2 \\boxed{1}</think>😀 \\boxed{2}';
    const at = answerStart(text, T);
    expect(answerStart(enc.encode(text), T)).toBe(enc.encode(text.slice(0, at)).length);
    const tags = [['«思考»', '«/思考»']] as const;
    const t2 = 'x «思考» \\boxed{1} «/思考» y';
    expect(answerStart(enc.encode(t2), tags)).toBe(enc.encode('x «思考» \\boxed{1} «/思考»').length);
    expect(answerStart(enc.encode('x «思考» y'), tags)).toBe(-1);
    // a tag longer than the text, or cut at its end, is not there
    expect(answerStart(enc.encode('<thi'), T)).toBe(0);
    expect(answerStart(enc.encode('a</thin'), T)).toBe(0);
  });

  it('finds the same answer part in a string and in its bytes (property)', () => {
    const piece = fc.constantFrom(
      '<think>',
      '</think>',
      '<thinking>',
      '</thinking>',
      '<answer>',
      '<',
      '>',
      '/',
      'think',
      'π',
      '😀',
      ' ',
      '\\boxed{5}',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (parts) => {
        const text = parts.join('');
        const at = answerStart(text, T);
        const bytesAt = answerStart(enc.encode(text), T);
        expect(bytesAt).toBe(at < 0 ? -1 : enc.encode(text.slice(0, at)).length);
      }),
      { numRuns: 500, seed: 42 },
    );
  });
});

describe('finalBoxUnclosed: an answer cut off inside its box', () => {
  it('is true for a final brace box that never closes, with no closed box after it', () => {
    expect(finalBoxUnclosed('the answer is \\boxed{\\frac{1}{2', 'last')).toBe(true);
    expect(finalBoxUnclosed('\\boxed{4} then \\boxed{5', 'last')).toBe(true);
    // with the first box: only when no box closes
    expect(finalBoxUnclosed('\\boxed{4} then \\boxed{5', 'first')).toBe(false);
    expect(finalBoxUnclosed('so \\boxed{5', 'first')).toBe(true);
  });

  it('is false for closed, bare, or outer unclosed boxes with a closed box inside', () => {
    expect(finalBoxUnclosed('\\boxed{5}', 'last')).toBe(false);
    expect(finalBoxUnclosed('\\boxed 5', 'last')).toBe(false);
    expect(finalBoxUnclosed('\\boxed{ \\boxed{5}', 'last')).toBe(false);
    expect(finalBoxUnclosed('no box', 'last')).toBe(false);
  });

  it('reads bytes as it reads the string, with the box commands given', () => {
    for (const t of ['π \\boxed{4} then \\boxed{√5', '\\boxed{4} then \\boxed{5}', '\\fbox{√', 'so \\boxed{5']) {
      for (const which of ['first', 'last'] as const) expect(finalBoxUnclosed(enc.encode(t), which)).toBe(finalBoxUnclosed(t, which));
    }
    expect(finalBoxUnclosed('\\fbox{5', 'last', { commands: ['boxed'] })).toBe(false);
  });
});
