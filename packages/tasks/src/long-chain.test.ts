import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CoreError } from '@rlvr/core';
import { Tokenizer } from '@rlvr/policy/tokenizer';
import { ChainSchema } from './chain.js';
import { longChainGenerator } from './long-chain.js';
import type { ChainTask } from './long-chain.js';

const PHRASES: [RegExp, string, (x: bigint, n: bigint) => bigint][] = [
  [/^add ([\d ]+)$/i, '+', (x, n) => x + n],
  [/^subtract ([\d ]+)$/i, '-', (x, n) => x - n],
  [/^multiply by ([\d ]+)$/i, '*', (x, n) => x * n],
  [/^divide by ([\d ]+)$/i, '/', (x, n) => (x % n === 0n ? x / n : -1n)],
];
const big = (s: string) => BigInt(s.replace(/ /g, ''));

/**
 * Read a task from its text alone, in BigInt, independently of the generator: the start and the
 * (op, operand) of each phrase of the question; then check every solution line against them.
 */
function checkTask(t: ChainTask, spaced: boolean): { values: bigint[]; operands: bigint[]; ops: string[] } {
  const m = /^Start with ([\d ]+)\. (.+)\. What is the result\?$/.exec(t.question);
  expect(m, t.question).not.toBeNull();
  const digits = spaced ? /^\d( \d)*$/ : /^\d+$/;
  let x = big(m![1]!);
  const values = [x];
  const operands: bigint[] = [];
  const ops: string[] = [];
  for (const phrase of m![2]!.split(', then ')) {
    const hit = PHRASES.map(([re, sym, f]) => [re.exec(phrase), sym, f] as const).find(([r]) => r !== null);
    expect(hit, phrase).toBeDefined();
    expect(hit![0]![1]).toMatch(digits);
    const n = big(hit![0]![1]!);
    x = hit![2](x, n);
    expect(x >= 100n && x <= 999n, `total in 100..999 in "${t.question}"`).toBe(true);
    values.push(x);
    operands.push(n);
    ops.push(hit![1]);
  }
  const lines = t.solution.split('\n');
  expect(lines).toHaveLength(ops.length + 1);
  ops.forEach((op, i) => {
    const f = (n: bigint) => (spaced ? String(n).split('').join(' ') : String(n));
    expect(lines[i]).toBe(`${f(values[i]!)} ${op} ${f(operands[i]!)} = ${f(values[i + 1]!)}`);
  });
  expect(lines.at(-1)).toBe(`\\boxed{${x}}`);
  expect(t.answer).toBe(String(x));
  return { values, operands, ops };
}

describe('longChainGenerator', () => {
  it('4 to 8 steps of all four operations; amounts of 2 to 3 digits, factors 2..9; answers recomputed from the text', () => {
    const gen = longChainGenerator();
    const steps = new Set<number>();
    const ops = new Set<string>();
    const addDigits = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const t = gen.task(7, i);
      const r = checkTask(t, true);
      steps.add(r.ops.length);
      r.ops.forEach((op, j) => {
        ops.add(op);
        const n = r.operands[j]!;
        if (op === '+' || op === '-') addDigits.add(String(n).length);
        else expect(n >= 2n && n <= 9n, `factor ${n}`).toBe(true);
      });
      expect(ChainSchema.safeParse(t.chain).success).toBe(true);
      expect(t.chain.steps.map((s) => BigInt(s.result))).toEqual(r.values.slice(1));
    }
    expect([...steps].sort()).toEqual([4, 5, 6, 7, 8]);
    expect([...ops].sort()).toEqual(['*', '+', '-', '/']);
    expect([...addDigits].sort()).toEqual([2, 3]);
  });

  it('the numbers a question shows and the results never coincide, and no result repeats', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.nat(10_000), (seed, index) => {
        const { chain } = longChainGenerator().task(seed, index);
        const shown = [chain.start, ...chain.steps.map((s) => s.operand)];
        const results = chain.steps.map((s) => s.result);
        expect(new Set(results).size).toBe(results.length);
        for (const r of results) expect(shown).not.toContain(r);
      }),
      { numRuns: 300 },
    );
  });

  it('is a pure function of (seed, index, options); plain digits on request', () => {
    const a = longChainGenerator().tasks(3, 5, 10);
    expect(longChainGenerator().tasks(3, 5, 10)).toEqual(a);
    expect(longChainGenerator().task(3, 12)).toEqual(a[2]);
    expect(longChainGenerator().task(4, 10)).not.toEqual(a[0]);
    const plain = longChainGenerator({ spacedDigits: false }).task(3, 10);
    expect(plain.chain).toEqual(a[0]!.chain);
    checkTask(plain, false);
  });

  it('completions of the default are 60 to 200 tokens in cl100k_base (solution + EOS)', () => {
    const tok = Tokenizer.builtin('cl100k_base');
    try {
      const lengths = longChainGenerator()
        .tasks(0, 500)
        .map((t) => tok.encode(t.solution).length + 1);
      expect(Math.min(...lengths)).toBeGreaterThanOrEqual(60);
      expect(Math.max(...lengths)).toBeLessThanOrEqual(200);
    } finally {
      tok.free();
    }
  });

  it('bad options fail naming the field', () => {
    expect(() => longChainGenerator({ minSteps: 9, maxSteps: 4 })).toThrow(CoreError);
    expect(() => longChainGenerator({ minSteps: 9, maxSteps: 4 })).toThrow(/minSteps: minSteps must not exceed maxSteps/);
    expect(() => longChainGenerator({ operations: ['mul', 'div'] })).toThrow(/operations: operations must include add or sub/);
    expect(() => longChainGenerator({ minValue: 900, maxValue: 910 })).toThrow(/maxValue: maxValue must be at least/);
    expect(() => longChainGenerator({ digits: 2 } as never)).toThrow(/unknown key.*digits/);
  });
});
