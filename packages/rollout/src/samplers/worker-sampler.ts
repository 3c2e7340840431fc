import { compiledModuleUrl, type PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import type { PolicySampler, PolicySamplerOptionsInput } from './policy-sampler.js';
import type { PromptSamples, Sampler, SampleRequest } from './sampler.js';
import type { SampleTaskInput } from './workers/sample-task.js';

let taskUrl: string | null = null;

/**
 * A `Sampler` that decodes on policy workers: the requests (prompts with their G completions)
 * cut into contiguous chunks of about equal rows, one per worker, each decoded by a policy
 * sampler on the worker's replica of `model` (whose weights are published first) with the
 * tokenizer of `modelDir` and `options`; the results come back in request order. Row j of a
 * request draws from its own RNG seeded by (request seed, j), so the tokens do not depend on which
 * worker decodes it (up to the last float bit across batch layouts, as within one sampler).
 * Prompts are token ids or text (a `messages` prompt has no chat template in a worker: its
 * completions fail). `base`, the same sampler in this thread, gives the token bytes and name.
 * An abort `signal` is checked before the call only.
 */
export function workerSampler(
  workers: PolicyWorkers,
  model: Qwen3Model,
  base: PolicySampler,
  spec: { modelDir: string; options: PolicySamplerOptionsInput },
): Sampler {
  return {
    name: base.name,
    tokenBytes: base.tokenBytes,
    async sample(requests: readonly SampleRequest[], signal?: AbortSignal): Promise<PromptSamples[]> {
      signal?.throwIfAborted();
      taskUrl ??= compiledModuleUrl(new URL('./workers/sample-task.js', import.meta.url));
      await workers.publish(model);
      const chunks = splitRequests(requests, workers.size);
      const inputs = chunks.map((c): SampleTaskInput | null =>
        c.length === 0 ? null : { modelDir: spec.modelDir, options: spec.options, requests: c },
      );
      return (await workers.run<SampleTaskInput | null, PromptSamples[]>(taskUrl, 'sampleShare', inputs)).flat();
    },
  };
}

/** `requests` in `n` contiguous chunks of about equal rows (`request.n` each); depends on the requests and `n` only. */
export function splitRequests(requests: readonly SampleRequest[], n: number): SampleRequest[][] {
  const total = requests.reduce((a, r) => a + r.n, 0);
  const chunks: SampleRequest[][] = Array.from({ length: n }, () => []);
  let acc = 0;
  for (const r of requests) {
    chunks[Math.min(n - 1, Math.floor(((acc + r.n / 2) * n) / Math.max(total, 1)))]!.push(r);
    acc += r.n;
  }
  return chunks;
}
