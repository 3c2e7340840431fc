import { findBoxes } from '@rlvr/core';

/**
 * The exact step labeller: the five step categories of SCOPE-RL's stage 2 (whose paper uses a frozen
 * LLM judge), as a program reads them on the synthetic arithmetic tasks. A property of the task, so it
 * lives here: SCOPE-RL's process-shape reward and the step-quality metrics of `@rlvr/eval` both read it.
 * - `useful`: a correct equation whose result is used later (an operand of a later equation, or the answer);
 * - `redundant`: a correct equation whose result is never used, or one that repeats an earlier equation;
 * - `wrong`: an equation whose result is not what its operation gives;
 * - `filler`: a line that is neither an equation nor an answer (restating the problem, chatter);
 * - `answer`: a line with a `\boxed{}`.
 */
export const STEP_LABELS = ['useful', 'redundant', 'wrong', 'filler', 'answer'] as const;
export type StepLabel = (typeof STEP_LABELS)[number];

// a number plain (`482`) or one digit at a time (`4 8 2`, the long-chain task's default), as the first-error labeller reads it
const NUM = String.raw`-?\d+(?: \d+)*`;
const EQUATION = new RegExp(String.raw`^\s*(${NUM})\s*([-+*/])\s*(${NUM})\s*=\s*(${NUM})\s*$`);
const num = (text: string): number => Number(text.replace(/ /g, ''));

function apply(a: number, op: string, b: number): number {
  if (op === '+') return a + b;
  if (op === '-') return a - b;
  if (op === '*') return a * b;
  return b === 0 ? Number.NaN : a / b;
}

/** The label of every non-blank line of a completion, in order (a step is a line). */
export function labelSteps(text: string): StepLabel[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const eqs = lines.map((l) => {
    const m = EQUATION.exec(l);
    if (m === null) return null;
    const [a, op, b] = [num(m[1]!), m[2]!, num(m[3]!)];
    return { a, op, b, c: num(m[4]!), key: `${a} ${op} ${b}` };
  });
  const answers = lines.map((l) => {
    const box = findBoxes(l).at(-1);
    return box === undefined ? null : Number(l.slice(box.contentStart, box.contentEnd).trim());
  });
  const seen = new Set<string>();
  return lines.map((_, k): StepLabel => {
    if (answers[k] !== null) return 'answer';
    const e = eqs[k];
    if (e === null || e === undefined) return 'filler';
    if (apply(e.a, e.op, e.b) !== e.c) return 'wrong';
    const repeated = seen.has(e.key);
    seen.add(e.key);
    if (repeated) return 'redundant';
    const usedLater = eqs.some((f, j) => j > k && f !== null && (f.a === e.c || f.b === e.c)) || answers.some((v, j) => j > k && v === e.c);
    return usedLater ? 'useful' : 'redundant';
  });
}
