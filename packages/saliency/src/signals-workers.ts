import { takeRollouts, type RolloutBatch } from '@rlvr/core';
import { batchLogprobs, compiledModuleUrl, splitRollouts, type PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import { gradXEmbBackend } from './grad-x-emb.js';
import { perturbationBackend } from './perturbation.js';
import type { SaliencyResult } from './result.js';
import { assembleSignals, computeSignals, needsPolicyPass, type BatchSignals, type SignalPlan } from './signals.js';
import type { SignalsTaskInput, SignalsTaskResult } from './workers/signals-task.js';

let taskUrl: string | null = null;

/**
 * The backends whose result for a rollout depends on that rollout only, so that a chunk of the
 * batch gives the same rows as the whole batch. (`noisy-kl` seeds its noise by the rollout's
 * index in the batch, so it runs on the whole batch, in this thread.)
 */
const ROW_LOCAL = [gradXEmbBackend, perturbationBackend];

/**
 * `computeSignals` on policy workers: the rollouts cut into contiguous chunks of about equal
 * length, one per worker (`splitRollouts`), each running the plan's backends (and the forward
 * pass of the policy signals, when no fused backend gives them) on its chunk; the per-token and
 * per-rollout results are concatenated in worker order, so they depend on the data and the worker
 * count only. The weights of `model` are published first. Other backends (`noisy-kl`, one
 * registered by your own code: the workers know only this package's) and options holding a typed
 * array (data of the whole batch) run on the whole batch in this thread.
 */
export async function computeSignalsOnWorkers(
  workers: PolicyWorkers,
  model: Qwen3Model,
  batch: RolloutBatch,
  plan: SignalPlan,
  pass: { padId: number; tokenBudget: number },
): Promise<BatchSignals> {
  if (batch.numRollouts === 0) return computeSignals(model, batch, plan, pass);
  const remote = plan.sources.filter((s) => ROW_LOCAL.includes(s.backend) && !holdsTypedArray(s.config));
  const local = plan.sources.filter((s) => !remote.includes(s));
  const policy = needsPolicyPass(plan);
  const results: Record<string, SaliencyResult> = {};
  for (const { backend, config } of local) results[backend.name] = backend.compute(model, batch, config);
  let policyPass: { logprobs: Float32Array; entropy: Float32Array } | null = null;
  if (remote.length > 0 || policy) {
    taskUrl ??= compiledModuleUrl(new URL('./workers/signals-task.js', import.meta.url));
    workers.publish(model);
    const all = Array.from({ length: batch.numRollouts }, (_, i) => i);
    const chunks = splitRollouts(batch, all, workers.size);
    const inputs = chunks.map((rows): SignalsTaskInput | null =>
      rows.length === 0
        ? null
        : {
            batch: takeRollouts(batch, rows),
            sources: remote.map((s) => ({ name: s.backend.name, config: s.config })),
            policy: policy ? { ...pass, temperature: plan.temperature } : null,
          },
    );
    const parts = (await workers.run<SignalsTaskInput | null, SignalsTaskResult | null>(taskUrl, 'signalsShare', inputs)).filter(
      (p) => p !== null,
    );
    remote.forEach((s, k) => {
      results[s.backend.name] = concatResults(parts.map((p) => p.results[k]!));
    });
    if (policy)
      policyPass = { logprobs: concat(parts.map((p) => p.policy!.logprobs)), entropy: concat(parts.map((p) => p.policy!.entropy)) };
  }
  return assembleSignals(batch, plan, results, () => policyPass ?? batchLogprobs(model, batch, { ...pass, temperature: plan.temperature }));
}

/** The results of contiguous chunks of rollouts, in order: the result of the whole batch. */
function concatResults(parts: SaliencyResult[]): SaliencyResult {
  const first = parts[0]!;
  const out: SaliencyResult = {
    signal: first.signal,
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
