import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CoreError } from '@rlvr/core';
import { syntheticGenerator, type SyntheticTask } from './synthetic.js';
import { findBoxes } from '@rlvr/core';

const PHRASES: [RegExp, (x: bigint, n: bigint) => bigint][] = [
  [/^buys (\d+) more$/, (x, n) => x + n],
  [/^gives away (\d+)$/, (x, n) => x - n],
  [/^gets (\d+) times as many$/, (x, n) => x * n],
  [/^splits them into (\d+) equal groups and keeps one$/, (x, n) => (x % n === 0n ? x / n : -1n)],
];
const LINE: Record<string, (a: bigint, b: bigint) => bigint> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => (a % b === 0n ? a / b : -1n),
};

/** Recompute the answer from the question text alone, in BigInt, independently of the generator. */
function answerFromQuestion(q: string): bigint {
  const m = /^(Tom|Ann|Sam|Mia|Ben|Eva) has (\d+) (\w+)\. (He|She) (.+)\. How many (\w+) does (\w+) have\?$/.exec(q);
  expect(m, q).not.toBeNull();
  expect(m![6]).toBe(m![3]);
  expect(m![7]).toBe(m![1]);
  let x = BigInt(m![2]!);
  for (const phrase of m![5]!.split(', then ')) {
    const hit = PHRASES.map(([re, f]) => [re.exec(phrase), f] as const).find(([r]) => r !== null);
    expect(hit, phrase).toBeDefined();
    x = hit![1](x, BigInt(hit![0]![1]!));
    expect(x > 0n, `total stays positive in "${q}"`).toBe(true);
  }
  return x;
}

/** Check every solution line's arithmetic and chaining; return the boxed answer. */
function checkSolution(t: SyntheticTask): string {
  const lines = t.solution.split('\n');
  let prev = BigInt(t.start);
  for (const line of lines.slice(0, -1)) {
    const m = /^(\d+) ([-+*/]) (\d+) = (\d+)$/.exec(line);
    expect(m, line).not.toBeNull();
    expect(BigInt(m![1]!)).toBe(prev);
    const c = LINE[m![2]!]!(BigInt(m![1]!), BigInt(m![3]!));
    expect(BigInt(m![4]!)).toBe(c);
    prev = c;
  }
  expect(lines.at(-1)).toBe(`\\boxed{${prev}}`);
  const box = findBoxes(t.solution).at(-1)!;
  return t.solution.slice(box.contentStart, box.contentEnd);
}

describe('syntheticGenerator', () => {
  it('writes the example layout of the brief', () => {
    const t = syntheticGenerator().task(1, 0);
    expect(t.question).toMatch(/^\w+ has \d+ \w+\. (He|She) .+\. How many \w+ does \w+ have\?$/);
    expect(t.solution.split('\n').length).toBe(t.steps.length + 1);
  });

  it('answers are right: recomputed from the question text and from every solution line', () => {
    for (const options of [
      {},
      { operations: ['add', 'sub', 'mul', 'div'] as const, minSteps: 1, maxSteps: 6, digits: 3 },
      { operations: ['div'] as const, digits: 1 },
    ]) {
      const gen = syntheticGenerator({ ...options, operations: options.operations ? [...options.operations] : undefined });
      for (const t of gen.tasks('check', 300)) {
        expect(String(answerFromQuestion(t.question))).toBe(t.answer);
        expect(checkSolution(t)).toBe(t.answer);
      }
    }
  });

  it('is deterministic under a seed, and task i does not depend on how many are drawn', () => {
    const gen = syntheticGenerator({ operations: ['add', 'sub', 'mul', 'div'] });
    const a = gen.tasks(42, 50);
    expect(syntheticGenerator({ operations: ['add', 'sub', 'mul', 'div'] }).tasks(42, 50)).toEqual(a);
    expect(gen.task(42, 37)).toEqual(a[37]);
    expect(gen.tasks(42, 10, 20)).toEqual(a.slice(20, 30));
    const b = gen.tasks(43, 50);
    expect(b.filter((t, i) => t.question === a[i]!.question).length).toBeLessThan(3);
  });

  it('pins the stream (a change here changes every embedded run)', () => {
    const t = syntheticGenerator().task(0, 0);
    expect({ question: t.question, solution: t.solution }).toMatchInlineSnapshot(`
      {
        "question": "Ann has 80 apples. She buys 53 more, then gives away 59, then buys 51 more. How many apples does Ann have?",
        "solution": "80 + 53 = 133
      133 - 59 = 74
      74 + 51 = 125
      \\boxed{125}",
      }
    `);
  });

  it('honours the difficulty knobs', () => {
    const gen = syntheticGenerator({ minSteps: 2, maxSteps: 4, digits: 1, operations: ['sub', 'mul'], maxFactor: 3 });
    const tasks = gen.tasks(7, 400);
    const lengths = new Set(tasks.map((t) => t.steps.length));
    expect([...lengths].sort()).toEqual([2, 3, 4]);
    expect(tasks.every((t) => t.start >= 1 && t.start <= 9)).toBe(true);
    const ops = new Set(tasks.flatMap((t) => t.steps.map((s) => s.op)));
    expect([...ops].sort()).toEqual(['mul', 'sub']);
    expect(
      tasks
        .flatMap((t) => t.steps)
        .filter((s) => s.op === 'mul')
        .every((s) => s.operand === 2 || s.operand === 3),
    ).toBe(true);
    // with subtraction alone, a total of 1 cannot shrink: that step adds instead
    const subOnly = syntheticGenerator({ minSteps: 4, maxSteps: 4, digits: 1, operations: ['sub'] })
      .tasks(7, 200)
      .flatMap((t) => t.steps);
    expect(subOnly.some((s) => s.op === 'add')).toBe(true);
    expect(subOnly.filter((s) => s.op === 'add').every((s) => s.before === 1)).toBe(true);
    const big = syntheticGenerator({ digits: 4 }).tasks(7, 200);
    expect(Math.max(...big.map((t) => t.start))).toBeGreaterThan(999);
    expect(Math.max(...big.map((t) => t.start))).toBeLessThan(10000);
  });

  it('a wrong intermediate result carried through the remaining steps changes the final answer', () => {
    const gen = syntheticGenerator({ operations: ['add', 'sub', 'mul', 'div'], maxSteps: 5 });
    fc.assert(
      fc.property(
        fc.nat(10_000),
        fc.nat(),
        fc.integer({ min: -50, max: 50 }).filter((d) => d !== 0),
        (index, k, delta) => {
          const t = gen.task('err', index);
          const from = k % t.steps.length;
          // carry a wrong result of step `from` through the rest, as a model copying its own slip would
          let x = t.steps[from]!.after + delta;
          for (const s of t.steps.slice(from + 1)) {
            x = s.op === 'add' ? x + s.operand : s.op === 'sub' ? x - s.operand : s.op === 'mul' ? x * s.operand : x / s.operand;
          }
          expect(x).not.toBe(Number(t.answer));
        },
      ),
      { numRuns: 500, seed: 3 },
    );
  });

  it('rejects bad knobs', () => {
    expect(() => syntheticGenerator({ minSteps: 4, maxSteps: 2 })).toThrow(/minSteps: minSteps must not exceed maxSteps/);
    expect(() => syntheticGenerator({ operations: ['pow' as 'add'] })).toThrow(CoreError);
    expect(() => syntheticGenerator({ operations: [] })).toThrow(CoreError);
  });
});
