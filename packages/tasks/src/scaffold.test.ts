import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TaskError } from './errors.js';
import { longChainGenerator } from './long-chain.js';
import { checkScaffold, scaffoldOf, ScaffoldSchema } from './scaffold.js';

describe('scaffoldOf', () => {
  it('one sub-question per step, answered by its result; the first names the start, the rest refer back', () => {
    const chain = {
      start: 482,
      steps: [
        { op: 'add', operand: 37, result: 519 },
        { op: 'div', operand: 3, result: 173 },
      ],
    } as const;
    const chainCopy = { start: chain.start, steps: chain.steps.map((s) => ({ ...s })) };
    expect(scaffoldOf(chainCopy, { spacedDigits: true })).toEqual({
      subQuestions: ['What is 4 8 2 plus 3 7?', 'What is the previous answer divided by 3?'],
      subAnswers: ['519', '173'],
    });
    expect(scaffoldOf(chainCopy).subQuestions[0]).toBe('What is 482 plus 37?');
  });

  it('never shows a sub-answer, for every long-chain problem', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.nat(100_000), fc.boolean(), (seed, index, spacedDigits) => {
        const { chain } = longChainGenerator({ spacedDigits }).task(seed, index);
        const s = scaffoldOf(chain, { spacedDigits });
        expect(s.subAnswers).toEqual(chain.steps.map((x) => String(x.result)));
        const shown = s.subQuestions.join(' ').replace(/(\d) (?=\d)/g, '$1');
        for (const a of s.subAnswers) expect(shown).not.toMatch(new RegExp(`(^|\\D)${a}(\\D|$)`));
      }),
      { numRuns: 300 },
    );
  });

  it('a chain whose amount equals a result is refused: its scaffold would show that result', () => {
    const chain = {
      start: 10,
      steps: [
        { op: 'add' as const, operand: 10, result: 20 },
        { op: 'add' as const, operand: 20, result: 40 },
      ],
    };
    expect(() => scaffoldOf(chain, { problem: 'p-17' })).toThrow(TaskError);
    expect(() => scaffoldOf(chain, { problem: 'p-17' })).toThrow(
      'problem "p-17": subQuestions.1: sub-question 2 ("What is the previous answer plus 20?") shows sub-answer 1 (20): the sub-answers must stay hidden',
    );
  });
});

describe('ScaffoldSchema / checkScaffold', () => {
  it('refuses a sub-answer shown in any sub-question, by value (digits spaced or not) or as text, naming the problem', () => {
    const leak = { subQuestions: ['What is 5 0 0 + 1 9?', 'Add 7.'], subAnswers: ['519', '526'] };
    expect(ScaffoldSchema.safeParse(leak).success).toBe(true);
    expect(() => checkScaffold({ ...leak, subQuestions: ['What is 5 1 9 - 0?', 'Add 7.'] }, 'Start with 500.')).toThrow(
      'problem "Start with 500.": subQuestions.0: sub-question 1 ("What is 5 1 9 - 0?") shows sub-answer 1 (519): the sub-answers must stay hidden',
    );
    expect(() => checkScaffold({ ...leak, subQuestions: ['What is 500 + 19?', 'Then 526 follows'] }, 'q')).toThrow(
      /sub-question 2 .* shows sub-answer 2 \(526\)/,
    );
    // a number inside a longer number is not shown
    expect(checkScaffold({ subQuestions: ['What is 5190 / 10?'], subAnswers: ['519'] }, 'q').subAnswers).toEqual(['519']);
    expect(() => checkScaffold({ subQuestions: ['Simplify x^2/x, giving x'], subAnswers: ['x'] }, 'q')).toThrow(/shows sub-answer 1 \(x\)/);
  });

  it('refuses a sub-answer list of the wrong length, naming the problem', () => {
    expect(() => checkScaffold({ subQuestions: ['a?', 'b?'], subAnswers: ['1'] }, 'problem 3')).toThrow(
      'problem "problem 3": subAnswers: 1 sub-answers for 2 sub-questions: give one per sub-question',
    );
    expect(() => checkScaffold({ subQuestions: [], subAnswers: [] }, 'p')).toThrow(TaskError);
  });
});
