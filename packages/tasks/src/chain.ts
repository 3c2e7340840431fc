/**
 * The exact chain of a synthetic problem: a starting number and the steps applied to it, each
 * with the result it must give. What the generators keep, what a data file's `chain` field
 * holds, and what the first-error labeller and the scaffolds are computed from.
 *
 *   { "start": 482, "steps": [{ "op": "add", "operand": 37, "result": 519 }, { "op": "mul", "operand": 3, "result": 1557 }] }
 */
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { TaskError } from './errors.js';

export const CHAIN_OPERATIONS = ['add', 'sub', 'mul', 'div'] as const;
export type ChainOperation = (typeof CHAIN_OPERATIONS)[number];

/** The symbol a solution line writes for each operation. */
export const OPERATION_SYMBOLS: Readonly<Record<ChainOperation, string>> = { add: '+', sub: '-', mul: '*', div: '/' };

/** Apply one operation; undefined where it has no exact integer result (division with a remainder, or by 0). */
export function applyExact(op: ChainOperation, value: number, operand: number): number | undefined {
  switch (op) {
    case 'add':
      return value + operand;
    case 'sub':
      return value - operand;
    case 'mul':
      return value * operand;
    case 'div':
      return operand !== 0 && value % operand === 0 ? value / operand : undefined;
  }
}

const SafeInt = z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

export const ChainStepSchema = z.object({ op: z.enum(CHAIN_OPERATIONS), operand: SafeInt, result: SafeInt }).strict();

/** A chain; every step's `result` is checked to be its operation applied exactly to the value before it. */
export const ChainSchema = z
  .object({ start: SafeInt, steps: z.array(ChainStepSchema).min(1).max(256) })
  .strict()
  .superRefine((c, ctx) => {
    let value = c.start;
    c.steps.forEach((s, i) => {
      const want = applyExact(s.op, value, s.operand);
      const sum = `${value} ${OPERATION_SYMBOLS[s.op]} ${s.operand}`;
      if (want === undefined)
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'operand'], message: `${sum} has no exact integer result` });
      else if (want !== s.result)
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'result'], message: `${sum} = ${want}, not ${s.result}` });
      else if (!Number.isSafeInteger(want))
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'result'], message: `${sum} is not a safe integer` });
      value = s.result;
    });
  });
export type Chain = z.output<typeof ChainSchema>;
export type ChainStep = z.output<typeof ChainStepSchema>;

/** A chain checked: a bad one throws `TaskError('invalid_chain')` naming the step and what is wrong. */
export function parseChain(value: unknown): Chain {
  const r = ChainSchema.safeParse(value);
  if (r.success) return r.data;
  throw new TaskError('invalid_chain', `invalid chain: ${formatZodIssues(r.error.issues, value)}`, {}, { cause: r.error });
}

/** The values of a chain in order: `[start, result of step 1, ..., result of step n]` (n + 1 numbers). */
export function chainValues(chain: Chain): number[] {
  return [chain.start, ...chain.steps.map((s) => s.result)];
}

/** A number as a solution line writes it: plain (`482`) or one digit at a time (`4 8 2`). */
export function formatNumber(n: number, spaced: boolean): string {
  const text = String(n);
  return spaced ? text.replace(/(\d)(?=\d)/g, '$1 ') : text;
}

/** The line of step `i`: `before op operand = result`. */
export function stepLine(chain: Chain, i: number, spaced = false): string {
  const s = chain.steps[i]!;
  const before = i === 0 ? chain.start : chain.steps[i - 1]!.result;
  const f = (n: number) => formatNumber(n, spaced);
  return `${f(before)} ${OPERATION_SYMBOLS[s.op]} ${f(s.operand)} = ${f(s.result)}`;
}

/** The worked solution of a chain: one line per step, then `\boxed{answer}` (the answer always plain: the grader reads it). */
export function chainSolution(chain: Chain, spaced = false): string {
  const lines = chain.steps.map((_, i) => stepLine(chain, i, spaced));
  lines.push(`\\boxed{${chain.steps.at(-1)!.result}}`);
  return lines.join('\n');
}
