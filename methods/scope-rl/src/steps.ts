import { findBoxes } from '@rlvr/core';

/**
 * The five step categories of SCOPE-RL's stage 2, as an exact program reads them on the synthetic
 * arithmetic task (the paper's frozen LLM judge is replaced by this labeller):
 * - `useful`: a correct equation whose result is used later (an operand of a later equation, or the answer);
 * - `redundant`: a correct equation whose result is never used, or one that repeats an earlier equation;
 * - `wrong`: an equation whose result is not what its operation gives;
 * - `filler`: a line that is neither an equation nor an answer (restating the problem, chatter);
 * - `answer`: a line with a `\boxed{}`.
 */
export const STEP_LABELS = ['useful', 'redundant', 'wrong', 'filler', 'answer'] as const;
export type StepLabel = (typeof STEP_LABELS)[number];

const EQUATION = /^\s*(-?\d+)\s*([-+*/])\s*(-?\d+)\s*=\s*(-?\d+)\s*$/;

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
    return m === null ? null : { a: Number(m[1]), op: m[2]!, b: Number(m[3]), c: Number(m[4]), key: `${m[1]}${m[2]}${m[3]}` };
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

/** Stage 2's coefficients (chosen: the paper's were not reachable). */
export interface ProcessShapeOptions {
  usefulWeight: number;
  lowValuePenalty: number;
  lengthPenalty: number;
}

/**
 * The process-shape term of a correct completion: usefulWeight * (useful steps / steps) - lowValuePenalty *
 * (redundant, wrong and filler steps / steps) - lengthPenalty * ln(1 + tokens), where the steps are the
 * lines that are not answers (with none, both ratios are 0).
 */
export function processShape(labels: readonly StepLabel[], tokens: number, o: ProcessShapeOptions): number {
  let useful = 0;
  let low = 0;
  for (const l of labels) {
    if (l === 'useful') useful++;
    else if (l !== 'answer') low++;
  }
  const steps = useful + low;
  const ratio = (n: number) => (steps === 0 ? 0 : n / steps);
  return o.usefulWeight * ratio(useful) - o.lowValuePenalty * ratio(low) - o.lengthPenalty * Math.log1p(tokens);
}
