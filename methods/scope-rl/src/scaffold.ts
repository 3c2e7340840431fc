import { z } from 'zod';
import type { ScoredGroup } from '@rlvr/core';
import { ScopeRlError } from './errors.js';

/**
 * A problem's answer-hidden scaffold, as a data file's `scaffold` field holds it: the sub-questions,
 * in order, and their sub-answers (gold, hidden: only the grader reads them). The last sub-question
 * is a prerequisite of the main question, not the main question itself.
 */
export const ScaffoldSchema = z.strictObject({
  subQuestions: z.array(z.string().trim().min(1)).min(1),
  subAnswers: z.array(z.string().trim().min(1)),
});
export type Scaffold = z.output<typeof ScaffoldSchema>;

/** How a problem is named in an error: its data file and line, else its group and question. */
function problemName(g: Pick<ScoredGroup, 'group' | 'question' | 'source'>): string {
  const q = g.question.length > 60 ? `${g.question.slice(0, 57)}...` : g.question;
  return g.source === undefined ? `problem of group ${g.group} ("${q}")` : `problem at ${g.source.file}:${g.source.line} ("${q}")`;
}

/**
 * The scaffold of `group`'s problem (its aux field `field`), or undefined when it has none. A scaffold
 * that does not parse, whose sub-answer list is not one per sub-question, or that leaks a sub-answer
 * into the prompt is a `ScopeRlError('invalid_scaffold')` naming the problem.
 */
export function scaffoldOf(group: ScoredGroup, field: string): Scaffold | undefined {
  const raw = group.aux?.[field];
  if (raw === undefined || raw === null) return undefined;
  const name = problemName(group);
  const parsed = ScaffoldSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ScopeRlError('invalid_scaffold', `${name}: ${field}.${issue.path.join('.')}: ${issue.message}`, { field });
  }
  const s = parsed.data;
  if (s.subAnswers.length !== s.subQuestions.length)
    throw new ScopeRlError(
      'invalid_scaffold',
      `${name}: ${s.subQuestions.length} sub-questions but ${s.subAnswers.length} sub-answers: one hidden answer per sub-question`,
      { field: `${field}.subAnswers` },
    );
  s.subAnswers.forEach((answer, k) => {
    const at = s.subQuestions.findIndex((q) => mentions(q, answer) && !mentions(group.question, answer));
    if (at >= 0)
      throw new ScopeRlError(
        'invalid_scaffold',
        `${name}: sub-question ${at + 1} shows sub-answer ${k + 1} ("${answer}"), which the prompt must hide`,
        { field: `${field}.subQuestions.${at}` },
      );
  });
  return s;
}

/**
 * Whether `text` shows `answer` as a whole token (not inside a longer number or word: "13" is not
 * in "113" or "1.3"). A sub-answer that the main question itself shows is no leak: the policy sees it anyway.
 */
function mentions(text: string, answer: string): boolean {
  const escaped = answer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w.])${escaped}(?![\\w]|\\.\\d)`).test(text);
}

/** The label before sub-answer k (1-based) and before the main answer, in the policy's output. */
export const subLabel = (k: number): string => `[SUB-${k} ANSWER]`;
export const MAIN_LABEL = '[MAIN ANSWER]';

/**
 * The scaffolded question: the main question, the sub-questions in order, and the output format
 * (each sub-answer in a labelled box, then the main answer). The sub-answers are not in it. The run's
 * prompt builder adds its instruction and chat template around it, as for the original question.
 */
export function scaffoldedQuestion(question: string, s: Scaffold): string {
  const subs = s.subQuestions.map((q, k) => `${k + 1}. ${q}`).join('\n');
  return [
    question,
    'First answer these sub-questions in order:',
    subs,
    `Answer each as ${subLabel(1).replace('1', 'k')} \\boxed{...}, then the question as ${MAIN_LABEL} \\boxed{...}.`,
  ].join('\n');
}
