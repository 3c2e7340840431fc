/**
 * The synthetic task families by name, so that a config or a command line can pick one
 * (`rlvr pretrain --task long-chain`, `rlvr-rollout synth --task long-chain`).
 */
import { parseConfig } from '@rlvr/core';
import { z } from 'zod';
import { longChainGenerator } from './long-chain.js';
import type { ChainTask } from './long-chain.js';
import { syntheticGenerator } from './synthetic.js';

/** `arith`: the short word problems of the embedded default (1 to 3 steps); `long-chain`: 4 to 8 checkable steps. */
export const TASK_NAMES = ['arith', 'long-chain'] as const;
export type TaskName = (typeof TASK_NAMES)[number];
export const TaskNameSchema = z.enum(TASK_NAMES);

/** What every family's generator gives: seeded problems with their worked solution and exact chain. */
export interface ChainTaskGenerator {
  /** Task `index` of the stream `seed`: a pure function of (seed, index, options). */
  task(seed: number | string, index: number): ChainTask;
  /** Tasks `from .. from + count - 1`. */
  tasks(seed: number | string, count: number, from?: number): ChainTask[];
}

/** The generator of family `name` with its options (that family's schema: bad ones throw `CoreError('invalid_config')`). */
export function taskGenerator(name: TaskName, options: unknown = {}): ChainTaskGenerator {
  const family = parseConfig(TaskNameSchema, name, 'task name');
  return family === 'long-chain' ? longChainGenerator(options as object) : syntheticGenerator(options as object);
}
