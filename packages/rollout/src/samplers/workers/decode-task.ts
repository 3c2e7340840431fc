/**
 * A policy worker's lane of a `WorkerDecodeExecutor`: the lane's `DecodeCache` on the worker's
 * replica, kept in this module between runs (one per executor), driven by the `CacheStep`s the
 * main thread plans; each step answers the lane's `[slots, V]` logits. Loaded by the worker from
 * `dist/` (see `PolicyWorkers.run` of `@rlvr/policy`).
 */
import type { WorkerContext } from '@rlvr/policy';
import { DecodeCache, type CacheStep } from '../decode-cache.js';

export interface DecodeLaneInput {
  /** the executor this lane belongs to (each keeps its own cache in the worker) */
  executor: string;
  padTokenId: number;
  /** drop the lane's cache first (the executor was disposed since the last step) */
  reset: boolean;
  /** the step to run, or null: only drop the cache */
  step: CacheStep | null;
}

const caches = new Map<string, DecodeCache>();

export async function decodeLane(ctx: WorkerContext, input: DecodeLaneInput | null): Promise<Float32Array | null> {
  if (input === null) return null;
  let cache = caches.get(input.executor);
  if (input.reset || input.step === null) {
    cache?.reset();
    caches.delete(input.executor);
    cache = undefined;
  }
  if (input.step === null) return null;
  if (cache === undefined) {
    cache = new DecodeCache(ctx.model, input.padTokenId);
    caches.set(input.executor, cache);
  }
  const logits = cache.forward(input.step);
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
}
