/**
 * The problems of data files for a training run: a file's rows as problems, and the held-out
 * split (a given eval file, or a seeded draw from the training file) checked against the run's sizes.
 */
import { CoreError } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { loadTasks } from '@rlvr/tasks';
import type { FieldMappingInput, PresetName } from '@rlvr/tasks';
import { splitHeldOut } from './problems.js';
import type { Problem } from './problems.js';

/** A data file's problems: each row's question, answer, solution, `scaffold` and `chain` (as `aux`) and its file and line. */
export async function fileProblems(file: string, format: PresetName | FieldMappingInput): Promise<Problem[]> {
  return (await loadTasks(file, format)).map((t) => ({
    question: t.question,
    answer: t.answer,
    ...(t.solution === undefined ? {} : { solution: t.solution }),
    ...((t.scaffold ?? t.chain) && { aux: { ...(t.scaffold && { scaffold: t.scaffold }), ...(t.chain && { chain: t.chain }) } }),
    source: { file, line: t.line },
  }));
}

/** The sizes a run asks of its data files: `problems` held out (drawn with `seed` when there is no eval file), `prompts` per step. */
export interface FileSplitOptions {
  /** the training file (named in messages; `data.train`) */
  train: string;
  /** the eval file, when given (`data.eval`) */
  eval?: string;
  problems: number;
  seed: number;
  prompts: number;
}

/**
 * The held-out and training problems of `all` (the training file's) and `evalRows` (the eval file's, if
 * any): the first `problems` eval rows, or `problems` drawn from `all`. Warns when a file is smaller than
 * asked (fewer eval rows, fewer training problems than a step's prompts); throws `CoreError('invalid_config')`
 * naming `data.train` / `data.eval` when nothing is left to train or to evaluate.
 */
export function splitFileProblems(
  all: readonly Problem[],
  evalRows: readonly Problem[] | undefined,
  o: FileSplitOptions,
  logger?: Pick<Logger, 'warn'>,
): { heldOut: Problem[]; train: Problem[] } {
  if (evalRows !== undefined && evalRows.length < o.problems)
    logger?.warn(`eval.problems is ${o.problems} but ${o.eval} has ${evalRows.length} rows: evaluating ${evalRows.length}`);
  const split =
    evalRows === undefined ? splitHeldOut(all, o.problems, o.seed) : { heldOut: evalRows.slice(0, o.problems), train: [...all] };
  if (split.train.length > 0 && split.train.length < o.prompts)
    logger?.warn(
      `${o.train} has ${split.train.length} training problems, fewer than rollout.prompts = ${o.prompts}: every step repeats some`,
    );
  if (split.train.length === 0)
    throw new CoreError(
      'invalid_config',
      `data.train: ${o.train} has ${all.length} problems, all held out for evaluation: lower eval.problems or give data.eval`,
      { field: 'data.train' },
    );
  if (split.heldOut.length === 0) throw new CoreError('invalid_config', 'data.eval: no held-out problems', { field: 'data.eval' });
  return split;
}
