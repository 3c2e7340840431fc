import { z } from 'zod';
import { parseConfig, Rng } from '@rlvr/core';
import { CHAIN_OPERATIONS, chainSolution, formatNumber } from './chain.js';
import type { Chain, ChainOperation, ChainStep } from './chain.js';

/**
 * The long-chain task family: 4 to 8 steps of mixed arithmetic on a running total, one checkable
 * line per step, so that a wrong completion's first wrong line (and its kind) is known exactly.
 *
 *   question: "Start with 4 8 2. Add 3 7, then divide by 3, then multiply by 4, ... What is the result?"
 *   solution: "4 8 2 + 3 7 = 5 1 9\n5 1 9 / 3 = 1 7 3\n1 7 3 * 4 = 6 9 2\n...\n\boxed{...}"
 *
 * What a small model can learn, by design:
 * - numbers are written one digit per token (`4 8 2`, `spacedDigits`), in the question and the
 *   lines alike: a tokenizer such as cl100k_base reads `482` as one token, and sums of whole-number
 *   tokens are a lookup table no 1M-parameter model holds; digit by digit, copying is attention
 *   and each result digit depends on a few digits (and a carry). Only the boxed answer is plain,
 *   because the grader reads it;
 * - added and subtracted amounts (and the start) have `minDigits`..`maxDigits` digits; multiplying
 *   and dividing use one-digit factors 2..`maxFactor`, and division is always exact;
 * - every running total stays within `minValue`..`maxValue` (3 digits by default), so no line
 *   grows or shrinks much: a completion is 60 to 200 tokens.
 * Every step is an injective map of the total, so a wrong result carried on gives a wrong answer.
 * Each line is right with a high but imperfect probability once learned, so over 4 to 8 lines
 * sampling at temperature finds a right chain more often (pass@k) than the mean accuracy.
 *
 * The numbers the question shows (start and operands) and the results are all different, and
 * no result repeats, so that a scaffold's sub-questions never show a sub-answer and a line copied
 * from another step is recognisable as such.
 */
export const LongChainOptionsSchema = z
  .object({
    minSteps: z.number().int().min(1).max(32).default(4),
    maxSteps: z.number().int().min(1).max(32).default(8),
    /** digits of the start and of the added / subtracted amounts */
    minDigits: z.number().int().min(1).max(6).default(2),
    maxDigits: z.number().int().min(1).max(6).default(3),
    /** operations to draw from, uniformly among those that apply to the running total */
    operations: z
      .array(z.enum(CHAIN_OPERATIONS))
      .min(1)
      .default([...CHAIN_OPERATIONS]),
    /** largest multiplier and divisor (the smallest is 2) */
    maxFactor: z.number().int().min(2).max(99).default(9),
    /** every running total stays in minValue..maxValue (3 digits by default: no line is short, none long) */
    minValue: z.number().int().min(1).max(1e9).default(100),
    maxValue: z.number().int().min(3).max(1e9).default(999),
    /** write each number one digit at a time (`4 8 2`); false: plainly (`482`) */
    spacedDigits: z.boolean().default(true),
  })
  .strict()
  .refine((o) => o.minSteps <= o.maxSteps, { message: 'minSteps must not exceed maxSteps', path: ['minSteps'] })
  .refine((o) => o.minDigits <= o.maxDigits, { message: 'minDigits must not exceed maxDigits', path: ['minDigits'] })
  // adding or subtracting the smallest amount must always be possible
  .refine((o) => o.maxValue >= o.minValue + 2 * 10 ** (o.minDigits - 1) - 1, {
    message: 'maxValue must be at least minValue + 2 * 10^(minDigits - 1) - 1, so that adding or subtracting always applies',
    path: ['maxValue'],
  })
  .refine((o) => 10 ** (o.minDigits - 1) <= o.maxValue && o.minValue <= Math.min(10 ** o.maxDigits - 1, o.maxValue), {
    message: 'no start of minDigits..maxDigits digits lies in minValue..maxValue',
    path: ['minValue'],
  })
  .refine((o) => o.operations.includes('add') || o.operations.includes('sub'), {
    message: 'operations must include add or sub (a total that cannot be multiplied or divided needs one)',
    path: ['operations'],
  });
export type LongChainOptions = z.output<typeof LongChainOptionsSchema>;
export type LongChainOptionsInput = z.input<typeof LongChainOptionsSchema>;

/** A synthetic problem with its exact chain. */
export interface ChainTask {
  question: string;
  /** the final value, as text */
  answer: string;
  /** the worked solution: one line per step, then `\boxed{answer}` */
  solution: string;
  chain: Chain;
}

/** A long-chain generator with options parsed once: bad options throw `CoreError('invalid_config')` here. */
export interface LongChainGenerator {
  readonly options: LongChainOptions;
  /** Task `index` of the stream `seed`: a pure function of (seed, index, options). */
  task(seed: number | string, index: number): ChainTask;
  /** Tasks `from .. from + count - 1`. */
  tasks(seed: number | string, count: number, from?: number): ChainTask[];
}

export function longChainGenerator(options: LongChainOptionsInput = {}): LongChainGenerator {
  const opts = parseConfig(LongChainOptionsSchema, options, 'long-chain task');
  const task = (seed: number | string, index: number): ChainTask => {
    const rng = new Rng(`long-chain:${seed}:${index}`);
    for (;;) {
      // a chain whose numbers collide is drawn again from the same stream: deterministic, and rare
      const chain = drawChain(rng, opts);
      if (chain !== undefined) return renderChainTask(chain, opts.spacedDigits);
    }
  };
  return {
    options: opts,
    task,
    tasks: (seed, count, from = 0) => Array.from({ length: count }, (_, i) => task(seed, from + i)),
  };
}

const PHRASE: Record<ChainOperation, string> = { add: 'add', sub: 'subtract', mul: 'multiply by', div: 'divide by' };

/** The question and solution of a chain, as the long-chain task writes them. */
export function renderChainTask(chain: Chain, spacedDigits: boolean): ChainTask {
  const f = (n: number) => formatNumber(n, spacedDigits);
  const phrases = chain.steps.map((s) => `${PHRASE[s.op]} ${f(s.operand)}`);
  const head = phrases[0]!.charAt(0).toUpperCase() + phrases[0]!.slice(1);
  const steps = [head, ...phrases.slice(1)].join(', then ');
  return {
    question: `Start with ${f(chain.start)}. ${steps}. What is the result?`,
    answer: String(chain.steps.at(-1)!.result),
    solution: chainSolution(chain, spacedDigits),
    chain,
  };
}

/** One chain, or undefined when no step could be drawn without repeating a number. */
function drawChain(rng: Rng, o: LongChainOptions): Chain | undefined {
  const nSteps = o.minSteps + rng.int(o.maxSteps - o.minSteps + 1);
  const lo = Math.max(10 ** (o.minDigits - 1), o.minValue);
  const start = lo + rng.int(Math.min(10 ** o.maxDigits - 1, o.maxValue) - lo + 1);
  const shown = new Set([start]); // numbers the question shows
  const results = new Set<number>();
  const steps: ChainStep[] = [];
  let value = start;
  while (steps.length < nSteps) {
    let step: ChainStep | undefined;
    for (let attempt = 0; attempt < 16 && step === undefined; attempt++) {
      const possible = o.operations.filter((op) => applies(op, value, o));
      const op = possible[rng.int(possible.length)]!;
      const operand = drawOperand(rng, op, value, o);
      const result = op === 'add' ? value + operand : op === 'sub' ? value - operand : op === 'mul' ? value * operand : value / operand;
      const fresh = !results.has(operand) && !shown.has(result) && !results.has(result) && result !== operand;
      if (fresh) step = { op, operand, result };
    }
    if (step === undefined) return undefined;
    steps.push(step);
    shown.add(step.operand);
    results.add(step.result);
    value = step.result;
  }
  return { start, steps };
}

function applies(op: ChainOperation, value: number, o: LongChainOptions): boolean {
  const lo = 10 ** (o.minDigits - 1);
  switch (op) {
    case 'add':
      return value + lo <= o.maxValue;
    case 'sub':
      return value - lo >= o.minValue;
    case 'mul':
      return value * 2 <= o.maxValue;
    case 'div':
      return divisors(value, o).length > 0;
  }
}

/** An operand for an applicable `op` that keeps the total in minValue..maxValue. */
function drawOperand(rng: Rng, op: ChainOperation, value: number, o: LongChainOptions): number {
  switch (op) {
    case 'add':
    case 'sub': {
      const limit = op === 'add' ? o.maxValue - value : value - o.minValue;
      // a digit count first (uniform over those that fit), then a number of that many digits
      const counts: number[] = [];
      for (let d = o.minDigits; d <= o.maxDigits && 10 ** (d - 1) <= limit; d++) counts.push(d);
      const d = counts[rng.int(counts.length)]!;
      const from = 10 ** (d - 1);
      const to = Math.min(10 ** d - 1, limit);
      return from + rng.int(to - from + 1);
    }
    case 'mul': {
      const top = Math.min(o.maxFactor, Math.floor(o.maxValue / value));
      return 2 + rng.int(top - 1);
    }
    case 'div': {
      const ds = divisors(value, o);
      return ds[rng.int(ds.length)]!;
    }
  }
}

/** Divisors 2..maxFactor of `value` that leave at least minValue. */
function divisors(value: number, o: LongChainOptions): number[] {
  const ds: number[] = [];
  for (let d = 2; d <= o.maxFactor; d++) if (value % d === 0 && value / d >= o.minValue) ds.push(d);
  return ds;
}
