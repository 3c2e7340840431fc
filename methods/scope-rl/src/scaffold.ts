import type { z } from 'zod';
import { isRlvrError, type ScoredGroup } from '@rlvr/core';
import { ChainSchema, ScaffoldSchema, scaffoldOf as scaffoldOfChain, type Scaffold } from '@rlvr/tasks';
import { ScopeRlError } from './errors.js';

/** How a problem is named in an error: its data file and line, else its group and question. */
function problemName(g: Pick<ScoredGroup, 'group' | 'question' | 'source'>): string {
  const q = g.question.length > 60 ? `${g.question.slice(0, 57)}...` : g.question;
  return g.source === undefined ? `problem of group ${g.group} ("${q}")` : `problem at ${g.source.file}:${g.source.line} ("${q}")`;
}

/** A value checked by a zod schema, or a `ScopeRlError('invalid_scaffold')` naming the problem, the field and the first issue. */
function checked<T>(schema: z.ZodType<T>, raw: unknown, group: ScoredGroup, field: string): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = [field, ...issue.path.map(String)].join('.');
  throw new ScopeRlError('invalid_scaffold', `${problemName(group)}: ${path}: ${issue.message}`, { field: path });
}

/**
 * The scaffold of `group`'s problem: its aux field `field` (a data file's `scaffold`), checked by `@rlvr/tasks`'
 * `ScaffoldSchema` (one hidden answer per sub-question, none shown by a sub-question), or else one made exactly
 * from its `chain` (the synthetic tasks', `@rlvr/tasks`' `scaffoldOf`: one sub-question per step); undefined when
 * it has neither, or when its chain cannot be scaffolded without showing an answer (a step's amount equal to a
 * result). A bad scaffold or chain is a `ScopeRlError('invalid_scaffold')` naming the problem and the field.
 */
export function scaffoldOf(group: ScoredGroup, field: string): Scaffold | undefined {
  const raw = group.aux?.[field];
  if (raw !== undefined && raw !== null) return checked(ScaffoldSchema, raw, group, field);
  const rawChain = group.aux?.chain;
  if (rawChain === undefined || rawChain === null) return undefined;
  const chain = checked(ChainSchema, rawChain, group, 'chain');
  try {
    return scaffoldOfChain(chain);
  } catch (err) {
    if (isRlvrError(err) && err.code === 'invalid_scaffold') return undefined;
    throw err;
  }
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
