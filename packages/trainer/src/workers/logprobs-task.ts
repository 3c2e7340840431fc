/**
 * A policy worker's share of a step's forward-only log-prob pass (the recomputed old log-probs,
 * or the reference model's when its weights are published): the same `batchLogprobs` call as the
 * in-process trainer, on this worker's rows. Loaded by the worker from `dist/` (see
 * `PolicyWorkers.run`).
 */
import type { RolloutBatch } from '@rlvr/core';
import { batchLogprobs, type WorkerContext } from '@rlvr/policy';
import { maskOf } from '../loss.js';

export interface LogprobsTaskInput {
  /** the whole batch: the micro-batches are planned over `rows` as the in-process pass plans them over the step's rows */
  batch: RolloutBatch;
  /** this worker's rows (possibly none) */
  rows: number[];
  tokenBudget: number;
  padId: number;
  temperature: number;
}

/** The log-probs of the completion tokens of `input.rows`, row after row in the order of `rows`. */
export async function logprobsShare(ctx: WorkerContext, input: LogprobsTaskInput): Promise<Float32Array> {
  const { batch, rows } = input;
  if (rows.length === 0) return new Float32Array(0);
  const { logprobs } = await batchLogprobs(ctx.model, batch, {
    tokenBudget: input.tokenBudget,
    padId: input.padId,
    include: maskOf(batch.numRollouts, rows),
    temperature: input.temperature,
  });
  let n = 0;
  for (const i of rows) n += batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
  const out = new Float32Array(n);
  let at = 0;
  for (const i of rows) {
    const part = logprobs.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!);
    out.set(part, at);
    at += part.length;
  }
  return out;
}
