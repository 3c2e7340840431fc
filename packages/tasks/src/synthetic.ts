import { z } from 'zod';
import { parseConfig, Rng } from '@rlvr/core';
import { CHAIN_OPERATIONS, applyExact, type Chain, type ChainOperation } from './chain.js';

/**
 * Synthetic verifiable tasks for the embedded default: multi-step arithmetic word
 * problems with worked solutions, in a small regular vocabulary that a tiny model
 * with a pruned tokenizer can learn.
 *
 *   question: "Tom has 12 apples. He buys 7 more, then gives away 5. How many apples does Tom have?"
 *   solution: "12 + 7 = 19\n19 - 5 = 14\n\boxed{14}"
 *
 * Every step is an injective map of the running total (add n, subtract n, multiply by
 * n >= 2, divide by n >= 2 where it divides exactly), so a wrong intermediate result
 * carried through the remaining steps always gives a wrong final answer. Totals stay
 * positive integers: an operation that cannot apply (subtracting from 1, dividing a
 * total without a divisor in 2..maxFactor) is not drawn for that step, and when none
 * of the chosen operations applies the step adds.
 */

/** The chain's operations: one definition of what each computes (`applyExact`). */
export const SYNTHETIC_OPERATIONS = CHAIN_OPERATIONS;
export type SyntheticOperation = ChainOperation;

export const SyntheticOptionsSchema = z
  .object({
    /** fewest and most steps (operations after the starting amount) */
    minSteps: z.number().int().min(1).max(12).default(2),
    maxSteps: z.number().int().min(1).max(12).default(3),
    /** the starting amount and added / subtracted amounts have 1..digits digits */
    digits: z.number().int().min(1).max(6).default(2),
    /** operations to draw from, uniformly among those that apply to the running total */
    operations: z.array(z.enum(SYNTHETIC_OPERATIONS)).min(1).default(['add', 'sub']),
    /** largest multiplier and divisor */
    maxFactor: z.number().int().min(2).max(12).default(5),
  })
  .strict()
  .refine((o) => o.minSteps <= o.maxSteps, { message: 'minSteps must not exceed maxSteps', path: ['minSteps'] });
export type SyntheticOptions = z.output<typeof SyntheticOptionsSchema>;
export type SyntheticOptionsInput = z.input<typeof SyntheticOptionsSchema>;

/** One step of a solution: `before op operand = after`. */
export interface SyntheticStep {
  op: SyntheticOperation;
  operand: number;
  before: number;
  after: number;
}

export interface SyntheticTask {
  question: string;
  /** the final amount, as text */
  answer: string;
  /** the worked solution, one line per step, ending with `\boxed{answer}` */
  solution: string;
  start: number;
  steps: SyntheticStep[];
  /** the same steps as an exact chain (what the first-error labeller and the scaffolds read) */
  chain: Chain;
}

const NAMES: readonly [string, 'He' | 'She'][] = [
  ['Tom', 'He'],
  ['Ann', 'She'],
  ['Sam', 'He'],
  ['Mia', 'She'],
  ['Ben', 'He'],
  ['Eva', 'She'],
];
const ITEMS = ['apples', 'pens', 'books', 'coins', 'cards', 'stones'] as const;
const SYMBOL: Record<SyntheticOperation, string> = { add: '+', sub: '-', mul: '*', div: '/' };
const PHRASE: Record<SyntheticOperation, (n: number) => string> = {
  add: (n) => `buys ${n} more`,
  sub: (n) => `gives away ${n}`,
  mul: (n) => `gets ${n} times as many`,
  div: (n) => `splits them into ${n} equal groups and keeps one`,
};

/** Apply one operation (the definition the solutions are written from): the chain's, with a remainder kept as a fraction. */
export function applyOperation(op: SyntheticOperation, value: number, operand: number): number {
  return applyExact(op, value, operand) ?? value / operand;
}

/** A generator with options parsed once: bad options throw `CoreError('invalid_config')` here. */
export interface SyntheticGenerator {
  readonly options: SyntheticOptions;
  /** Task `index` of the stream `seed`: a pure function of (seed, index, options). */
  task(seed: number | string, index: number): SyntheticTask;
  /** Tasks `from .. from + count - 1`. */
  tasks(seed: number | string, count: number, from?: number): SyntheticTask[];
}

export function syntheticGenerator(options: SyntheticOptionsInput = {}): SyntheticGenerator {
  const opts = parseConfig(SyntheticOptionsSchema, options, 'synthetic task');
  const task = (seed: number | string, index: number): SyntheticTask => generate(new Rng(`synthetic:${seed}:${index}`), opts);
  return {
    options: opts,
    task,
    tasks: (seed, count, from = 0) => Array.from({ length: count }, (_, i) => task(seed, from + i)),
  };
}

function generate(rng: Rng, o: SyntheticOptions): SyntheticTask {
  const [name, pronoun] = NAMES[rng.int(NAMES.length)]!;
  const item = ITEMS[rng.int(ITEMS.length)]!;
  const nSteps = o.minSteps + rng.int(o.maxSteps - o.minSteps + 1);
  const amount = () => 1 + rng.int(10 ** o.digits - 1); // 1 .. 10^digits - 1
  const start = amount();
  const steps: SyntheticStep[] = [];
  let value = start;
  while (steps.length < nSteps) {
    // uniform over the operations that apply to this total; adding always does
    const possible = o.operations.filter((x) => canApply(x, value, o.maxFactor));
    const op: SyntheticOperation = possible.length > 0 ? possible[rng.int(possible.length)]! : 'add';
    const operand = drawOperand(rng, op, value, amount, o.maxFactor);
    const after = applyOperation(op, value, operand);
    steps.push({ op, operand, before: value, after });
    value = after;
  }
  const phrases = steps.map((s) => PHRASE[s.op](s.operand));
  const question = `${name} has ${start} ${item}. ${pronoun} ${phrases.join(', then ')}. How many ${item} does ${name} have?`;
  const lines = steps.map((s) => `${s.before} ${SYMBOL[s.op]} ${s.operand} = ${s.after}`);
  lines.push(`\\boxed{${value}}`);
  const chain: Chain = { start, steps: steps.map((s) => ({ op: s.op, operand: s.operand, result: s.after })) };
  return { question, answer: String(value), solution: lines.join('\n'), start, steps, chain };
}

/** Whether `op` can keep the total a positive integer: subtracting needs a total of 2 or more, dividing a divisor in 2..maxFactor. */
function canApply(op: SyntheticOperation, value: number, maxFactor: number): boolean {
  if (op === 'sub') return value >= 2;
  if (op === 'div') return divisors(value, maxFactor).length > 0;
  return true;
}

/** An operand for an applicable `op` that keeps the total a positive integer and the step injective. */
function drawOperand(rng: Rng, op: SyntheticOperation, value: number, amount: () => number, maxFactor: number): number {
  switch (op) {
    case 'add':
      return amount();
    case 'sub': {
      const n = amount();
      return n < value ? n : 1 + rng.int(value - 1);
    }
    case 'mul':
      return 2 + rng.int(maxFactor - 1);
    case 'div': {
      const ds = divisors(value, maxFactor);
      return ds[rng.int(ds.length)]!;
    }
  }
}

function divisors(value: number, maxFactor: number): number[] {
  const ds: number[] = [];
  for (let d = 2; d <= maxFactor; d++) if (value % d === 0) ds.push(d);
  return ds;
}
