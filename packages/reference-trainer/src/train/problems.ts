import { existsSync } from 'node:fs';
import { FileStream, TaskStream, loadTasks, splitHeldOut, syntheticGenerator } from '@rlvr/rollout';
import type { Problem, ProblemStream } from '@rlvr/rollout';
import { ReferenceTrainerError } from '../errors.js';
import type { TrainConfig } from './config.js';

/**
 * The held-out and training problems: the synthetic task, or the `data` files (read before
 * anything is written; `train` lists a file's training problems so that they can be checked).
 */
export async function loadProblems(
  config: TrainConfig,
): Promise<{ heldOut: Problem[]; stream: ProblemStream; train?: readonly Problem[] }> {
  if (config.data === undefined) {
    // the held-out problems are the first of stream `eval.seed`: the ones `rlvr pretrain` held out with the same settings
    const heldOut = syntheticGenerator(config.evalTask ?? config.task).tasks(config.eval.seed, config.eval.problems);
    return { heldOut, stream: new TaskStream(config.seed, config.task, heldOut) };
  }
  const { train, eval: evalFile, format } = config.data;
  const read = async (file: string, field: string): Promise<Problem[]> => {
    try {
      return (await loadTasks(file, format)).map((t) => ({ question: t.question, answer: t.answer, source: { file, line: t.line } }));
    } catch (err) {
      const missing = !existsSync(file);
      throw new ReferenceTrainerError(
        missing ? 'missing_file' : 'invalid_record',
        (err as Error).message,
        { field: `data.${field}` },
        { cause: err },
      );
    }
  };
  const all = await read(train, 'train');
  const split =
    evalFile === undefined
      ? splitHeldOut(all, config.eval.problems, config.eval.seed)
      : { heldOut: (await read(evalFile, 'eval')).slice(0, config.eval.problems), train: all };
  if (split.train.length === 0)
    throw new ReferenceTrainerError(
      'invalid_config',
      `data.train: ${train} has ${all.length} problems, all held out for evaluation: lower eval.problems or give data.eval`,
      { field: 'data.train' },
    );
  if (split.heldOut.length === 0)
    throw new ReferenceTrainerError('invalid_config', 'data.eval: no held-out problems', { field: 'data.eval' });
  return { heldOut: split.heldOut, stream: new FileStream(split.train, config.seed), train: split.train };
}
