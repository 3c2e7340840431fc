import { describe, expect, it } from 'vitest';
import { findBoxes } from '@rlvr/core';
import { anchoredAnswers, boxedAnswer, choiceAnswer, findMathEnvs, looksLikeProse, numberAnswer, reasoningEnd } from './extract.js';

const boxed = (text: string, which: 'first' | 'last' = 'last'): string | null => boxedAnswer(text, which)?.content ?? null;

describe('findBoxes / boxedAnswer', () => {
  it('balances nested braces and finds \\fbox', () => {
    expect(boxed('so \\boxed{\\frac{1}{\\sqrt{2}}} done', 'last')).toBe('\\frac{1}{\\sqrt{2}}');
    expect(boxed('\\fbox{7}', 'last')).toBe('7');
  });
  it('reads \\boxed 5 without braces', () => {
    expect(boxed('the answer is \\boxed 5$.', 'last')).toBe('5');
  });
  it('takes the last box by default and the first on request', () => {
    const t = 'first \\boxed{1}. Later, after much work, we conclude \\boxed{2}.';
    expect(boxed(t, 'last')).toBe('2');
    expect(boxed(t, 'first')).toBe('1');
  });
  it('joins boxes separated only by a separator into one answer, and deduplicates', () => {
    expect(boxed('\\boxed{1}, \\boxed{2} and \\boxed{3}', 'last')).toBe('1, 2, 3');
    expect(boxed('\\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}', 'last')).toBe('-2, 1');
    expect(boxed('\\boxed{1} no no no no no \\boxed{2}', 'last')).toBe('2');
    expect(boxed('\\boxed{840} so \\boxed{840}', 'last')).toBe('840');
  });
  it('unwraps a box inside a box and skips an unbalanced one', () => {
    expect(boxed('\\boxed{\\boxed{12}}', 'last')).toBe('12');
    expect(findBoxes('\\boxed{\\frac{1}{2')).toEqual([]);
  });
  it('stays linear on thousands of unbalanced boxes', () => {
    expect(findBoxes('\\boxed{'.repeat(50_000))).toEqual([]);
  });
});

describe('fallback extraction', () => {
  it('finds math environments but not inline ones broken by a newline', () => {
    expect(findMathEnvs('Answer \\[ 9 \\]').map((e) => e.content)).toEqual(['9']);
    expect(findMathEnvs('Answer $ \n 9 \n $')).toEqual([]);
    expect(findMathEnvs('Answer $$ \n 9 \n $$').map((e) => e.content)).toEqual(['9']);
  });
  it('reads anchors, trimming prose around the answer', () => {
    expect(anchoredAnswers('Final Answer: The volume of $ABCD$ is 120. I hope it is correct.')[0]).toBe('120');
    expect(anchoredAnswers('blah\nAnswer: C')).toContain('C');
    expect(anchoredAnswers('<answer>12.5</answer>')).toContain('12.5');
    expect(anchoredAnswers('58 + 2 = 60, so he saves **60 riyals** after 3 weeks.')).toEqual(['60']);
  });
  it('finds the last number that is not part of a word', () => {
    expect(numberAnswer('AZYUK2A', 'last')).toBeNull();
    expect(numberAnswer('it is 1,000.99€ or 3', 'last')?.content).toBe('3');
    expect(numberAnswer('probability 2/3.', 'last')?.content).toBe('2/3');
  });
  it('tells prose from answers', () => {
    expect(looksLikeProse('Therefore $x \\geq 5$ is the solution.')).toBe(true);
    expect(looksLikeProse('\\frac{1}{3} \\text{meters}')).toBe(false);
    expect(looksLikeProse('28 percent')).toBe(false);
    expect(looksLikeProse('答案: C')).toBe(true);
  });
  it('grades only what follows the reasoning delimiter', () => {
    const text = '<think>\\boxed{1}</think> \\boxed{2}';
    expect(text.slice(reasoningEnd(text, ['</think>']))).toBe(' \\boxed{2}');
    expect(reasoningEnd('<think> no end', ['</think>'])).toBe(-1);
  });
});

describe('choiceAnswer', () => {
  it.each([
    ['thinking about it I think the correct answer is C', 'C'],
    ["Let's think step by step. It's not A because it doesn't make sense, therefore I think it's B", 'B'],
    ["The answer is for sure D, it can't be A or B", 'D'],
    ["D. it can't be A or B", 'D'],
    ['(D) Alina', 'D'],
    ['B。不是 A', 'B'],
    ['réponse est C non A', 'C'],
  ])('%j -> %s', (text, want) => {
    expect(choiceAnswer(text, 'ABCD')).toBe(want);
  });
});
