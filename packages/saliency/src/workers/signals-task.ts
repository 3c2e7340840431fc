/**
 * A policy worker's share of a batch's signals: the built-in backends named, run on its
 * contiguous slice of the rollouts, and the forward pass's log-probs when asked. Loaded by the
 * worker from `dist/` (see `PolicyWorkers.run` of `@rlvr/policy`).
 */
import type { RolloutBatch } from '@rlvr/core';
import { batchLogprobs, type WorkerContext } from '@rlvr/policy';
import { getBackend } from '../registry.js';
import type { SaliencyResult } from '../result.js';

export interface SignalsTaskInput {
  /** the worker's rollouts (`takeRollouts` of the batch) */
  batch: RolloutBatch;
  /** backend names and their parsed options */
  sources: { name: string; config: unknown }[];
  /** the forward pass's log-probs and entropies, when no fused backend gives them */
  policy: { padId: number; tokenBudget: number; temperature: number } | null;
}

export interface SignalsTaskResult {
  results: SaliencyResult[];
  policy: { logprobs: Float32Array; entropy: Float32Array } | null;
}

export function signalsShare(ctx: WorkerContext, input: SignalsTaskInput | null): SignalsTaskResult | null {
  if (input === null) return null;
  const results = input.sources.map((s) => getBackend(s.name).compute(ctx.model, input.batch, s.config));
  const policy = input.policy === null ? null : batchLogprobs(ctx.model, input.batch, input.policy);
  return { results, policy: policy && { logprobs: policy.logprobs, entropy: policy.entropy } };
}
