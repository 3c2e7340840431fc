import { describe, expect, it } from 'vitest';
import { chainSolution, labelSteps, longChainGenerator } from './index.js';

describe('labelSteps: the exact step labeller', () => {
  it('tells the five categories apart', () => {
    const text = ['Tom has 12 apples.', '12 + 7 = 19', '12 + 7 = 19', '3 * 3 = 9', '19 - 5 = 15', '15 + 1 = 16', '', '\\boxed{16}'].join(
      '\n',
    );
    // 19 is used (19 - 5), the repeat is redundant, 9 is never used, 19 - 5 is 14 not 15, 15 + 1 = 16 is the answer
    expect(labelSteps(text)).toEqual(['filler', 'useful', 'redundant', 'redundant', 'wrong', 'useful', 'answer']);
    expect(labelSteps('')).toEqual([]);
  });

  it('reads numbers written one digit at a time, as the long-chain task writes them', () => {
    expect(labelSteps('4 8 2 + 3 7 = 5 1 9\n482 + 37 = 519\n5 1 9 / 3 = 1 7 4\n\\boxed{174}')).toEqual([
      'useful',
      'redundant',
      'wrong',
      'answer',
    ]);
    // every step of a long-chain problem's own worked solution is useful
    const t = longChainGenerator({ minSteps: 5, maxSteps: 5 }).tasks(3, 1)[0]!;
    expect(labelSteps(t.solution)).toEqual(['useful', 'useful', 'useful', 'useful', 'useful', 'answer']);
    expect(labelSteps(chainSolution(t.chain, false))).toEqual(labelSteps(t.solution));
  });
});
