import { existsSync } from 'node:fs';
import {
  FileStream,
  TaskStream,
  fileProblems,
  splitFileProblems,
  splitValidation,
  syntheticGenerator,
  validationTasks,
} from '@rlvr/rollout';
import { longChainGenerator } from '@rlvr/tasks';
import type { Logger } from '@rlvr/core';
import type { Problem, ProblemStream } from '@rlvr/rollout';
import { ReferenceTrainerError } from '../errors.js';
import type { TrainConfig } from './config.js';

/**
 * The held-out and training problems: the synthetic task, or the `data` files (read before
 * anything is written; `train` lists a file's training problems so that they can be checked).
 * Files smaller than the config asks for are warned about, once each.
 */
export async function loadProblems(
  config: TrainConfig,
  logger?: Pick<Logger, 'warn'>,
): Promise<{ heldOut: Problem[]; stream: ProblemStream; train?: readonly Problem[] }> {
  if (config.data === undefined) {
    // the held-out problems are the first of stream `eval.seed` (as `rlvr pretrain` held out), with `aux.chain` for step quality
    const long = config.family === 'long-chain' ? longChainGenerator(config.longChain) : undefined;
    const gen = long ?? syntheticGenerator(config.evalTask ?? config.task);
    const heldOut = gen.tasks(config.eval.seed, config.eval.problems).map((t) => ({ ...t, aux: { chain: t.chain } }));
    // a validation split (`validation`): evaluated instead of the held-out problems, skipped by training as they are
    const v =
      config.validation && validationTasks(long ?? syntheticGenerator(config.task), config.validation.problems, config.eval.seed, heldOut);
    const evaluated = v?.map((t) => ({ ...t, aux: { chain: t.chain } })) ?? heldOut;
    return { heldOut: evaluated, stream: new TaskStream(config.seed, long ?? config.task, [...heldOut, ...(v ?? [])]) };
  }
  const { train, eval: evalFile, format } = config.data;
  const read = async (file: string, field: string): Promise<Problem[]> => {
    try {
      return await fileProblems(file, format);
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
  const evalRows = evalFile === undefined ? undefined : await read(evalFile, 'eval');
  const sizes = { problems: config.eval.problems, seed: config.eval.seed, prompts: config.rollout.prompts };
  const split = splitFileProblems(all, evalRows, { train, ...(evalFile && { eval: evalFile }), ...sizes }, logger);
  if (config.validation === undefined)
    return { heldOut: split.heldOut, stream: new FileStream(split.train, config.seed), train: split.train };
  const v = splitValidation(split.train, config.validation.problems, config.eval.seed);
  return { heldOut: v.validation, stream: new FileStream(v.train, config.seed), train: v.train };
}
