/**
 * A policy worker's share of a batch's signals: the backends named (this package's by name, others
 * from the module their `onWorkers` names), run on its contiguous slice of the rollouts, and the
 * forward pass's log-probs when asked. Loaded by the worker from `dist/` (see `PolicyWorkers.run`
 * of `@rlvr/policy`).
 */
import { formatLocation, isRlvrError, type ErrorLocation, type RolloutBatch } from '@rlvr/core';
import { batchLogprobs, type WorkerContext } from '@rlvr/policy';
import type { SaliencyBackend, WorkerPlacement } from '../backend.js';
import { SaliencyError } from '../errors.js';
import { getBackend } from '../registry.js';
import type { SaliencyResult } from '../result.js';

export interface SignalsTaskInput {
  /** the worker's rollouts (`takeRollouts` of the batch) */
  batch: RolloutBatch;
  /** the index in the whole batch of each of the worker's rollouts: its errors name a rollout by that */
  rows: number[];
  /** backend names, their parsed options and where a worker finds them */
  sources: { name: string; config: unknown; placement: WorkerPlacement }[];
  /** the forward pass's log-probs and entropies, when no fused backend gives them */
  policy: { padId: number; tokenBudget: number; temperature: number } | null;
}

export interface SignalsTaskResult {
  results: SaliencyResult[];
  policy: { logprobs: Float32Array; entropy: Float32Array } | null;
}

export async function signalsShare(ctx: WorkerContext, input: SignalsTaskInput | null): Promise<SignalsTaskResult | null> {
  if (input === null) return null;
  try {
    const results = [];
    for (const s of input.sources) results.push(await (await backendOf(s.name, s.placement)).compute(ctx.model, input.batch, s.config));
    const policy = input.policy === null ? null : await batchLogprobs(ctx.model, input.batch, input.policy);
    return { results, policy: policy && { logprobs: policy.logprobs, entropy: policy.entropy } };
  } catch (e) {
    throw numberedInBatch(e, input.rows);
  }
}

/**
 * An rlvr error naming rollout i of the worker's share, renamed to the batch's rollout `rows[i]` (its
 * `location` and the message's location prefix): the share numbers its rollouts from 0.
 */
function numberedInBatch(e: unknown, rows: readonly number[]): unknown {
  if (!isRlvrError(e) || e.location.rollout === undefined || rows[e.location.rollout] === undefined) return e;
  const message = e.message.slice(formatLocation(e.location).length);
  const location: ErrorLocation = { ...e.location, rollout: rows[e.location.rollout] };
  (e as { location: ErrorLocation }).location = location;
  e.message = formatLocation(location) + message;
  return e;
}

/** The backend `name`: from this package's registry, or the export its placement names (imported once per worker). */
async function backendOf(name: string, placement: WorkerPlacement): Promise<SaliencyBackend> {
  if (placement === true) return getBackend(name);
  const mod = (await import(placement.module)) as Record<string, unknown>;
  const backend = mod[placement.exportName] as SaliencyBackend | undefined;
  if (typeof backend?.compute !== 'function' || backend.name !== name)
    throw new SaliencyError(
      'invalid_config',
      `saliency backend ${name}: export ${placement.exportName} of ${placement.module} is not that backend (onWorkers must name the module and export that hold it)`,
    );
  return backend;
}
