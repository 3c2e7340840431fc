/**
 * Answer-hidden scaffolds (SCOPE-RL's first stage): a problem broken into sub-questions whose
 * answers the policy must find, with the sub-answers kept apart (never shown). Made exactly from
 * a chain for the synthetic tasks; read from a data file's `scaffold` field for others.
 */
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { formatNumber } from './chain.js';
import type { Chain } from './chain.js';
import { TaskError } from './errors.js';

const NUMBER_RE = /-?\d+(?: \d+)*(?:\.\d+)?/g;

/** Where sub-answer `j` shows in the sub-question texts: the index of the first sub-question that shows it, or -1. */
function leakOf(subQuestions: readonly string[], answer: string): number {
  const a = answer.trim();
  if (/^-?\d+(?:\.\d+)?$/.test(a)) {
    // a number shows where a number of the text (plain or one digit at a time) has its value
    const want = Number(a);
    return subQuestions.findIndex((q) => [...q.matchAll(NUMBER_RE)].some((m) => Number(m[0].replace(/ /g, '')) === want));
  }
  const squeeze = (s: string) => s.replace(/\s+/g, '');
  return subQuestions.findIndex((q) => squeeze(q).includes(squeeze(a)));
}

/**
 * A scaffold: `subQuestions[i]` is shown to the policy, `subAnswers[i]` (its answer) never is. The
 * two lists have one length, and no sub-question shows any sub-answer (a number is compared by
 * value, `5 1 9` and `519` alike; other answers as text without blanks). The problem's own
 * question is not checked: real problems often show numbers an intermediate step also reaches.
 */
export const ScaffoldSchema = z
  .object({
    subQuestions: z.array(z.string().trim().min(1)).min(1).max(256),
    subAnswers: z.array(z.string().trim().min(1)).min(1).max(256),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.subAnswers.length !== s.subQuestions.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['subAnswers'],
        message: `${s.subAnswers.length} sub-answers for ${s.subQuestions.length} sub-questions: give one per sub-question`,
      });
      return;
    }
    s.subAnswers.forEach((a, j) => {
      const i = leakOf(s.subQuestions, a);
      if (i >= 0)
        ctx.addIssue({
          code: 'custom',
          path: ['subQuestions', i],
          message: `sub-question ${i + 1} (${JSON.stringify(s.subQuestions[i])}) shows sub-answer ${j + 1} (${a}): the sub-answers must stay hidden`,
        });
    });
  });
export type Scaffold = z.output<typeof ScaffoldSchema>;

/** A scaffold checked; a bad one throws `TaskError('invalid_scaffold')` naming `problem` (a question or id) and what is wrong. */
export function checkScaffold(scaffold: unknown, problem: string): Scaffold {
  const r = ScaffoldSchema.safeParse(scaffold);
  if (r.success) return r.data;
  const name = problem.length > 60 ? problem.slice(0, 57) + '...' : problem;
  throw new TaskError('invalid_scaffold', `problem ${JSON.stringify(name)}: ${formatZodIssues(r.error.issues)}`, {}, { cause: r.error });
}

const VERB: Record<Chain['steps'][number]['op'], string> = { add: 'plus', sub: 'minus', mul: 'times', div: 'divided by' };

/**
 * The scaffold of a chain: one sub-question per step, answered by that step's result. The first
 * names the start; each later one refers to "the previous answer", so no result is shown:
 *   ["What is 4 8 2 plus 3 7?", "What is the previous answer times 3?", ...] / ["519", "1557", ...]
 * Numbers are written as the task writes them (`spacedDigits`). Throws `TaskError('invalid_scaffold')`
 * when a step's amount happens to equal a result (the long-chain generator never draws such a chain).
 */
export function scaffoldOf(chain: Chain, options: { spacedDigits?: boolean; problem?: string } = {}): Scaffold {
  const f = (n: number) => formatNumber(n, options.spacedDigits ?? false);
  const subQuestions = chain.steps.map((s, i) =>
    i === 0 ? `What is ${f(chain.start)} ${VERB[s.op]} ${f(s.operand)}?` : `What is the previous answer ${VERB[s.op]} ${f(s.operand)}?`,
  );
  const scaffold = { subQuestions, subAnswers: chain.steps.map((s) => String(s.result)) };
  return checkScaffold(scaffold, options.problem ?? `starting at ${chain.start}`);
}
