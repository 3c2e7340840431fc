/**
 * `rlvr eval --held-out RUN_DIR`: a training run's own held-out problems, regenerated from its
 * `config.json` as `rlvr train` chose them (the synthetic task's `eval.seed` stream, the first
 * `eval.problems` of `data.eval`, or the `splitHeldOut` of `data.train`), written to a JSON-lines
 * file that `runEval` reads like any dataset.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadTasks, splitHeldOut, syntheticGenerator } from '@rlvr/rollout';
import type { FieldMappingInput, SyntheticOptionsInput } from '@rlvr/rollout';
import { longChainGenerator } from '@rlvr/tasks';
import type { Chain, LongChainOptionsInput } from '@rlvr/tasks';
import { EvaluationError } from './errors.js';

interface RunConfig {
  family?: string;
  longChain?: LongChainOptionsInput;
  task?: SyntheticOptionsInput;
  evalTask?: SyntheticOptionsInput;
  eval?: { seed?: number; problems?: number };
  data?: { train: string; eval?: string; format?: string | FieldMappingInput };
}

/** Write RUN_DIR's held-out problems to `file` (fields question, answer and, where a problem has one, chain: the synthetic layout); returns how many. */
export async function writeHeldOut(runDir: string, file: string): Promise<number> {
  const configFile = join(runDir, 'config.json');
  if (!existsSync(configFile)) throw new EvaluationError('missing_file', 'not a run directory (no config.json there)', { file: runDir });
  let c: RunConfig;
  try {
    c = JSON.parse(readFileSync(configFile, 'utf8')) as RunConfig;
  } catch (err) {
    throw new EvaluationError(
      'invalid_record',
      `cannot read the run's config: ${(err as Error).message}`,
      { file: configFile },
      { cause: err },
    );
  }
  const seed = c.eval?.seed;
  const problems = c.eval?.problems;
  if (typeof seed !== 'number' || typeof problems !== 'number')
    throw new EvaluationError('invalid_record', 'the run config has no eval.seed and eval.problems', { file: configFile, field: 'eval' });
  let rows: { question: string; answer: string; chain?: Chain }[];
  if (c.data === undefined && c.family === 'long-chain') rows = longChainGenerator(c.longChain ?? {}).tasks(seed, problems);
  else if (c.data === undefined) rows = syntheticGenerator(c.evalTask ?? c.task ?? {}).tasks(seed, problems);
  else {
    const read = async (f: string) =>
      (await loadTasks(f, c.data!.format as never)).map((t) => ({
        question: t.question,
        answer: t.answer,
        ...(t.chain && { chain: t.chain }),
      }));
    rows =
      c.data.eval !== undefined
        ? (await read(c.data.eval)).slice(0, problems)
        : splitHeldOut(await read(c.data.train), problems, seed).heldOut;
  }
  // the chain goes along (the synthetic tasks): the evaluation reports the Step-Quality metrics on it
  await writeFile(
    file,
    rows.map((r) => JSON.stringify({ question: r.question, answer: String(r.answer), ...(r.chain && { chain: r.chain }) })).join('\n') +
      '\n',
  );
  return rows.length;
}
