import { existsSync } from 'node:fs';
import { FileStream, TaskStream, loadTasks, splitHeldOut, syntheticGenerator } from '@rlvr/rollout';
import { longChainGenerator } from '@rlvr/tasks';
import type { Logger } from '@rlvr/core';
import type { ChainSource } from '@rlvr/tasks';
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
    return { heldOut, stream: new TaskStream(config.seed, long ?? config.task, heldOut) };
  }
  const { train, eval: evalFile, format } = config.data;
  const read = async (file: string, field: string): Promise<Problem[]> => {
    try {
      return (await loadTasks(file, format)).map((t) => ({
        question: t.question,
        answer: t.answer,
        ...(t.solution === undefined ? {} : { solution: t.solution }),
        ...((t.scaffold ?? t.chain) && { aux: { ...(t.scaffold && { scaffold: t.scaffold }), ...(t.chain && { chain: t.chain }) } }),
        source: { file, line: t.line },
      }));
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
  if (evalRows !== undefined && evalRows.length < config.eval.problems)
    logger?.warn(`eval.problems is ${config.eval.problems} but ${evalFile} has ${evalRows.length} rows: evaluating ${evalRows.length}`);
  const split =
    evalRows === undefined
      ? splitHeldOut(all, config.eval.problems, config.eval.seed)
      : { heldOut: evalRows.slice(0, config.eval.problems), train: all };
  if (split.train.length > 0 && split.train.length < config.rollout.prompts)
    logger?.warn(
      `${train} has ${split.train.length} training problems, fewer than rollout.prompts = ${config.rollout.prompts}: every step repeats some`,
    );
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

/** Where `rlvr credit` and `eval.credit` take problems with their chains: the config's data file or synthetic family. */
export function chainSource(c: TrainConfig, seed: number): ChainSource {
  if (c.data !== undefined) return { file: c.data.train, format: c.data.format };
  return { family: c.family, options: c.family === 'long-chain' ? c.longChain : c.task, seed };
}
