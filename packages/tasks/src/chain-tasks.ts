/**
 * Problems that carry their exact chain, from either source the labeller reads: a synthetic family's generator or
 * a data file whose rows have a `chain` field (`rlvr credit` labels every completion against it).
 */
import type { Chain } from './chain.js';
import { loadTasks } from './datasets.js';
import type { FieldMappingInput } from './datasets.js';
import { TaskError } from './errors.js';
import { taskGenerator } from './families.js';
import type { TaskName } from './families.js';
import type { PresetName } from './presets.js';

/** A problem with its chain (and its worked solution where the source has one). */
export interface ChainProblem {
  question: string;
  answer: string;
  solution?: string;
  chain: Chain;
}

/** Where the problems come from: a family with its options (tasks `0 .. count - 1` of stream `seed`), or a data file's first rows. */
export type ChainSource = { family: TaskName; options?: unknown; seed: number } | { file: string; format: PresetName | FieldMappingInput };

/** The chain source of a run's config (`rlvr train`'s keys): its data file, else its synthetic family with that family's options. */
export function configChainSource(
  c: { data?: { train: string; format: PresetName | FieldMappingInput }; family: TaskName; longChain?: unknown; task?: unknown },
  seed: number,
): ChainSource {
  if (c.data !== undefined) return { file: c.data.train, format: c.data.format };
  return { family: c.family, options: c.family === 'long-chain' ? c.longChain : c.task, seed };
}

/**
 * `count` problems with their chains. A file with fewer rows, or a row without a chain, throws
 * `TaskError('invalid_row')` naming the file (and the line).
 */
export async function chainProblems(source: ChainSource, count: number): Promise<ChainProblem[]> {
  if ('family' in source) return taskGenerator(source.family, source.options ?? {}).tasks(source.seed, count);
  const rows = await loadTasks(source.file, source.format, count);
  if (rows.length < count) throw new TaskError('invalid_row', `has ${rows.length} problems; ${count} are needed`, { file: source.file });
  return rows.map((t) => {
    if (t.chain === undefined)
      throw new TaskError('invalid_row', "no chain: the first-error labeller needs each problem's chain", {
        file: source.file,
        line: t.line,
        field: 'chain',
      });
    return { question: t.question, answer: t.answer, chain: t.chain, ...(t.solution === undefined ? {} : { solution: t.solution }) };
  });
}
