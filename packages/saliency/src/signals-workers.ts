import { takeRollouts, type RolloutBatch, type Signals } from '@rlvr/core';
import { batchLogprobs, compiledModuleUrl, splitRollouts, type PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import type { SaliencyResult } from './result.js';
import {
  assembleSignals,
  computeSignals,
  needsPolicyPass,
  policyPassOptions,
  refreshedSources,
  refreshNeedsPolicyPass,
  refreshSignals,
  withRefreshed,
  type BatchSignals,
  type RefreshPass,
  type SignalPlan,
  type SignalSource,
} from './signals.js';
import type { SignalsTaskInput, SignalsTaskResult } from './workers/signals-task.js';

let taskUrl: string | null = null;

/**
 * `computeSignals` on policy workers: the rollouts cut into contiguous chunks of about equal
 * length, one per worker (`splitRollouts`), each running the plan's backends (and the forward
 * pass of the policy signals, when no fused backend gives them) on its chunk; the per-token and
 * per-rollout results are concatenated in worker order, so they depend on the data and the worker
 * count only. The weights of `model` are published first. The backends that say how to run on
 * workers do (`onWorkers`: `grad-x-emb`, `perturbation`, and any of yours that names its module);
 * the others (`noisy-kl` seeds its noise by the rollout's index in the batch) and options holding a
 * typed array (data of the whole batch) run on the whole batch in this thread.
 */
export async function computeSignalsOnWorkers(
  workers: PolicyWorkers,
  model: Qwen3Model,
  batch: RolloutBatch,
  plan: SignalPlan,
  pass: { padId: number; tokenBudget: number },
): Promise<BatchSignals> {
  if (batch.numRollouts === 0) return computeSignals(model, batch, plan, pass);
  const policy = needsPolicyPass(plan) ? { ...pass, temperature: plan.temperature } : null;
  const { results, policyPass } = await sourcesOnWorkers(workers, model, batch, plan.sources, policy, null);
  const own = policyPass ?? (needsPolicyPass(plan) ? await batchLogprobs(model, batch, { ...pass, temperature: plan.temperature }) : null);
  return assembleSignals(batch, plan, results, () => own!);
}

/**
 * `refreshSignals` on policy workers: `base` with the signals of rollouts `rows` that depend on the
 * parameters (saliency scores, `policy.entropy`) recomputed with `model` as it is now (its weights
 * are published first), those rows cut into contiguous chunks of about equal length, one per worker,
 * as `computeSignalsOnWorkers` cuts a batch; other backends run on those rows in this thread. With
 * 1 worker bit-identical to `refreshSignals`; with more, within float rounding. What a
 * `saliency.refresh` of `epoch` or `minibatch` feeds the estimator in `rlvr train --workers N`.
 */
export async function refreshSignalsOnWorkers(
  workers: PolicyWorkers,
  model: Qwen3Model,
  batch: RolloutBatch,
  rows: readonly number[],
  plan: SignalPlan,
  base: Signals,
  pass: RefreshPass = {},
): Promise<Signals> {
  const sources = refreshedSources(plan);
  const policy = refreshNeedsPolicyPass(plan) ? policyPassOptions(plan, pass) : null;
  if ((sources.length === 0 && policy === null) || rows.length === 0) return refreshSignals(model, batch, rows, plan, base, pass);
  const sub = takeRollouts(batch, rows);
  const { results, policyPass } = await sourcesOnWorkers(workers, model, sub, sources, policy, rows);
  return withRefreshed(batch, rows, sub, plan, base, results, policyPass?.entropy);
}

/**
 * Each source backend's result on `batch` (at least one rollout), and the policy pass's log-probs and
 * entropies when `policy` asks for them: the row-local backends and the policy pass on the workers
 * (contiguous chunks, concatenated in worker order), the others on the whole batch in this thread.
 * `batchRows[i]` is the index of `batch`'s rollout i in the caller's batch (null: the same), so that a
 * worker's error names a rollout as the caller numbers it.
 */
async function sourcesOnWorkers(
  workers: PolicyWorkers,
  model: Qwen3Model,
  batch: RolloutBatch,
  sources: readonly SignalSource[],
  policy: { padId: number; tokenBudget: number; temperature: number } | null,
  batchRows: readonly number[] | null,
): Promise<{ results: Record<string, SaliencyResult>; policyPass: { logprobs: Float32Array; entropy: Float32Array } | null }> {
  const remote = sources.filter((s) => s.backend.onWorkers !== undefined && !holdsTypedArray(s.config));
  const local = sources.filter((s) => !remote.includes(s));
  const results: Record<string, SaliencyResult> = {};
  for (const { backend, config } of local) results[backend.name] = await backend.compute(model, batch, config);
  let policyPass: { logprobs: Float32Array; entropy: Float32Array } | null = null;
  if (remote.length > 0 || policy !== null) {
    taskUrl ??= compiledModuleUrl(new URL('./workers/signals-task.js', import.meta.url));
    await workers.publish(model);
    const all = Array.from({ length: batch.numRollouts }, (_, i) => i);
    const chunks = splitRollouts(batch, all, workers.size);
    const inputs = chunks.map((rows): SignalsTaskInput | null =>
      rows.length === 0
        ? null
        : {
            batch: takeRollouts(batch, rows),
            rows: batchRows === null ? rows : rows.map((r) => batchRows[r]!),
            sources: remote.map((s) => ({ name: s.backend.name, config: s.config, placement: s.backend.onWorkers! })),
            policy,
          },
    );
    const parts = (await workers.run<SignalsTaskInput | null, SignalsTaskResult | null>(taskUrl, 'signalsShare', inputs)).filter(
      (p) => p !== null,
    );
    remote.forEach((s, k) => {
      results[s.backend.name] = concatResults(parts.map((p) => p.results[k]!));
    });
    if (policy !== null)
      policyPass = { logprobs: concat(parts.map((p) => p.policy!.logprobs)), entropy: concat(parts.map((p) => p.policy!.entropy)) };
  }
  return { results, policyPass };
}

/** The results of contiguous chunks of rollouts, in order: the result of the whole batch. */
function concatResults(parts: SaliencyResult[]): SaliencyResult {
  const first = parts[0]!;
  const out: SaliencyResult = {
    signal: first.signal,
    ...(first.width === undefined ? {} : { width: first.width }),
    scores: concat(parts.map((p) => p.scores)),
    hasScores: concatBytes(parts.map((p) => p.hasScores)),
    missing: parts.reduce((a, p) => a + p.missing, 0),
  };
  for (const key of ['loss', 'logprobs', 'entropy'] as const) if (first[key] !== undefined) out[key] = concat(parts.map((p) => p[key]!));
  return out;
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function holdsTypedArray(v: unknown): boolean {
  if (ArrayBuffer.isView(v)) return true;
  if (v === null || typeof v !== 'object') return false;
  return Object.values(v).some(holdsTypedArray);
}
