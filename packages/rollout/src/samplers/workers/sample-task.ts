/**
 * A policy worker's share of a `sample` call: its contiguous slice of the requests, decoded by a
 * policy sampler on the worker's replica (built once per model directory and options). Loaded by
 * the worker from `dist/` (see `PolicyWorkers.run` of `@rlvr/policy`).
 */
import { loadTokenizer, type WorkerContext } from '@rlvr/policy';
import { policySampler, type PolicySampler, type PolicySamplerOptionsInput } from '../policy-sampler.js';
import type { PromptSamples, SampleRequest } from '../sampler.js';

export interface SampleTaskInput {
  /** the model directory whose tokenizer the sampler decodes with */
  modelDir: string;
  options: PolicySamplerOptionsInput;
  requests: SampleRequest[];
}

const samplers = new Map<string, PolicySampler>();

export async function sampleShare(ctx: WorkerContext, input: SampleTaskInput | null): Promise<PromptSamples[]> {
  if (input === null) return [];
  const key = JSON.stringify([input.modelDir, input.options]);
  let sampler = samplers.get(key);
  if (sampler === undefined) {
    sampler = policySampler(ctx.model, loadTokenizer(input.modelDir), input.options);
    samplers.set(key, sampler);
  }
  return sampler.sample(input.requests);
}
