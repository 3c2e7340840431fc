/**
 * A policy worker's share of one optimizer step: the loss, per-token sums and gradients of its
 * rows, with the same code as the in-process update (`accumulateGradients`). Loaded by the worker
 * from `dist/` (see `PolicyWorkers.run`).
 */
import type { WorkerContext } from '@rlvr/policy';
import { accumulateGradients, type StepLossInput, type TokenSums } from '../loss.js';

export interface GradientTaskInput extends StepLossInput {
  /** this worker's rows of the optimizer step (possibly none) */
  rows: number[];
}

export interface GradientTaskResult {
  loss: number;
  sums: TokenSums;
  /** the parameters whose gradient the worker wrote into its buffer, in layout order */
  present: string[];
}

export async function gradientShare(ctx: WorkerContext, input: GradientTaskInput): Promise<GradientTaskResult> {
  const sums: TokenSums = { tokens: 0, clipLow: 0, clipHigh: 0, approxKl: 0, entropy: 0, refKl: 0 };
  const { loss, grads } = await accumulateGradients(ctx.model, input, input.rows, sums);
  const present: string[] = [];
  try {
    for (const slot of ctx.layout.slots) {
      const g = grads.get(slot.name);
      if (g === undefined) continue;
      ctx.gradients.set((await g.data()) as Float32Array, slot.offset);
      present.push(slot.name);
    }
  } finally {
    for (const g of grads.values()) g.dispose();
  }
  return { loss, sums, present };
}
