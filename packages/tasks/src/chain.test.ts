import { describe, expect, it } from 'vitest';
import { chainSolution, ChainSchema, parseChain } from './chain.js';
import { TaskError } from './errors.js';

describe('ChainSchema', () => {
  it('checks every result against its step, naming the step', () => {
    const ok = {
      start: 482,
      steps: [
        { op: 'add', operand: 37, result: 519 },
        { op: 'div', operand: 3, result: 173 },
      ],
    };
    expect(parseChain(ok)).toEqual(ok);
    expect(chainSolution(parseChain(ok), true)).toBe('4 8 2 + 3 7 = 5 1 9\n5 1 9 / 3 = 1 7 3\n\\boxed{173}');
    const wrong = { ...ok, steps: [ok.steps[0], { op: 'div', operand: 3, result: 172 }] };
    expect(() => parseChain(wrong)).toThrow(TaskError);
    expect(() => parseChain(wrong)).toThrow('invalid chain: steps.1.result: 519 / 3 = 173, not 172');
    expect(() => parseChain({ ...ok, steps: [{ op: 'div', operand: 5, result: 96 }] })).toThrow(
      'steps.0.operand: 482 / 5 has no exact integer result',
    );
    expect(() => parseChain({ ...ok, steps: [{ op: 'pow', operand: 2, result: 1 }] })).toThrow(/steps\.0\.op/);
    expect(() => parseChain({ start: 1, steps: [] })).toThrow(/steps/);
    expect(ChainSchema.safeParse({ ...ok, extra: 1 }).success).toBe(false);
  });
});
