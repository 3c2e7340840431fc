import { describe, expect, it } from 'vitest';
import type { ProblemAux, ScoredGroup } from '@rlvr/core';
import { readLabelled, scaffoldOf, scaffoldReward, scaffoldedQuestion } from './index.js';

const QUESTION = 'Ann has 8 apples. She buys 5 more, then gives away 6, then buys 4 more. How many apples does Ann have?';
const scaffold = { subQuestions: ['How many apples after buying 5 more?', 'How many after giving 6 away?'], subAnswers: ['13', '7'] };
const group = (aux: ProblemAux | undefined, source?: { file: string; line: number }): ScoredGroup => ({
  group: 3,
  question: QUESTION,
  answer: '11',
  aux,
  source,
  rewards: new Float32Array(4),
  texts: [],
  lengths: new Int32Array(4),
});

describe('scaffolds', () => {
  it('are read from the aux field; a problem without one has none', () => {
    expect(scaffoldOf(group({ scaffold }), 'scaffold')).toEqual(scaffold);
    expect(scaffoldOf(group(undefined), 'scaffold')).toBeUndefined();
    expect(scaffoldOf(group({ scaffold: null }), 'scaffold')).toBeUndefined();
  });

  it("refuse one that shows a sub-answer in the prompt (@rlvr/tasks' check), naming the problem and the sub-question", () => {
    const leaky = { subQuestions: ['How many apples after buying 5 more (13)?', 'How many after giving 6 away?'], subAnswers: ['13', '7'] };
    expect(() => scaffoldOf(group({ scaffold: leaky }, { file: 'train.jsonl', line: 12 }), 'scaffold')).toThrow(
      'field scaffold.subQuestions.0: problem at train.jsonl:12 ("Ann has 8 apples. She buys 5 more, then gives away 6, the..."): scaffold.subQuestions.0: sub-question 1 ("How many apples after buying 5 more (13)?") shows sub-answer 1 (13): the sub-answers must stay hidden',
    );
    // a number inside a longer one is no leak
    const fine = { subQuestions: ['After 113 seconds, how many apples?'], subAnswers: ['13'] };
    expect(scaffoldOf(group({ scaffold: fine }), 'scaffold')).toEqual(fine);
  });

  it('refuse a sub-answer list of the wrong length and a malformed scaffold, naming the problem', () => {
    expect(() => scaffoldOf(group({ scaffold: { ...scaffold, subAnswers: ['13'] } }), 'scaffold')).toThrow(
      /problem of group 3 \("Ann has 8 apples.*"\): scaffold.subAnswers: 1 sub-answers for 2 sub-questions: give one per sub-question/,
    );
    expect(() => scaffoldOf(group({ scaffold: { subQuestions: [], subAnswers: [] } }), 'scaffold')).toThrow(
      /problem of group 3 .*: scaffold\.subQuestions: /,
    );
    expect(() => scaffoldOf(group({ scaffold: { subQuestions: ['a?'], subAnswers: [13] } }), 'scaffold')).toThrow(
      /scaffold\.subAnswers\.0: /,
    );
    expect(() => scaffoldOf(group({ scaffold: 'steps' }), 'scaffold')).toThrow(/problem of group 3/);
  });

  it('are made from the chain of a synthetic problem when it has no scaffold field, one sub-question per step', () => {
    const chain = {
      start: 8,
      steps: [
        { op: 'add', operand: 5, result: 13 },
        { op: 'sub', operand: 6, result: 7 },
      ],
    };
    expect(scaffoldOf(group({ chain }), 'scaffold')).toEqual({
      subQuestions: ['What is 8 plus 5?', 'What is the previous answer minus 6?'],
      subAnswers: ['13', '7'],
    });
    // a step amount equal to a result cannot be asked without showing it: no scaffold for that problem
    const showing = {
      start: 8,
      steps: [
        { op: 'add', operand: 5, result: 13 },
        { op: 'add', operand: 13, result: 26 },
      ],
    };
    expect(scaffoldOf(group({ chain: showing }), 'scaffold')).toBeUndefined();
    expect(() => scaffoldOf(group({ chain: { start: 8, steps: [{ op: 'add', operand: 5, result: 14 }] } }), 'scaffold')).toThrow(
      /problem of group 3 .*: chain.steps.0.result: 8 \+ 5 = 13, not 14/,
    );
  });

  it('make a prompt with the sub-questions in order and the labels, without the sub-answers', () => {
    const q = scaffoldedQuestion(QUESTION, scaffold);
    expect(q.startsWith(QUESTION)).toBe(true);
    expect(q).toContain('1. How many apples after buying 5 more?\n2. How many after giving 6 away?');
    expect(q).toContain('[SUB-k ANSWER] \\boxed{...}');
    expect(q).toContain('[MAIN ANSWER] \\boxed{...}');
    expect(q).not.toMatch(/\b13\b|\b7\b/);
  });
});

describe('the scaffolded reward', () => {
  const grade = (text: string, beta = 0.5) => scaffoldReward(text, scaffold, '11', beta);
  it('is beta L/m + (1 - beta) 1[L = m] 1[main correct]', () => {
    expect(grade('[SUB-1 ANSWER] \\boxed{13} [SUB-2 ANSWER] \\boxed{7} [MAIN ANSWER] \\boxed{11}')).toEqual({
      reward: 1,
      prefix: 2,
      mainCorrect: true,
    });
    expect(grade('[SUB-1 ANSWER] \\boxed{13} [SUB-2 ANSWER] \\boxed{7} [MAIN ANSWER] \\boxed{12}').reward).toBe(0.5);
    expect(grade('[SUB-1 ANSWER] \\boxed{13} [SUB-2 ANSWER] \\boxed{8} [MAIN ANSWER] \\boxed{11}')).toEqual({
      reward: 0.25,
      prefix: 1,
      mainCorrect: true,
    });
    // a wrong first sub-answer breaks the prefix even when the second is right; the main answer then does not count
    expect(grade('[SUB-1 ANSWER] \\boxed{12} [SUB-2 ANSWER] \\boxed{7} [MAIN ANSWER] \\boxed{11}').reward).toBe(0);
    expect(grade('[SUB-1 ANSWER] \\boxed{13} [SUB-2 ANSWER] \\boxed{7} [MAIN ANSWER] \\boxed{11}', 0.8).reward).toBeCloseTo(1, 12);
    expect(grade('[SUB-1 ANSWER] \\boxed{13} [SUB-2 ANSWER] \\boxed{7} [MAIN ANSWER] \\boxed{11.0}').mainCorrect).toBe(true); // math-verify's equality
  });

  it('reads the last label of each kind and falls back to the last box after the sub-answers', () => {
    expect(
      readLabelled('[SUB-1 ANSWER] \\boxed{1} then [SUB-1 ANSWER] \\boxed{13} [SUB-2 ANSWER] \\boxed{7} so \\boxed{9} and \\boxed{11}', 2),
    ).toEqual({
      sub: ['13', '7'],
      main: '11',
    });
    expect(readLabelled('[SUB-2 ANSWER] nothing', 2)).toEqual({ sub: [null, null], main: null });
    expect(readLabelled('\\boxed{4}', 1)).toEqual({ sub: [null], main: '4' });
  });
});
