import { describe, expect, it } from 'vitest';
import { Qwen3Model, selectBackend, type BackendName } from '@rlvr/policy';
import { policySampler } from './policy-sampler.js';
import type { PromptSamples } from './sampler.js';
import { tinyPolicy } from '../test-utils/tiny-policy.js';

// KV-cache sampling under a seed on the webgpu backend against the cpu backend: in CI on Dawn's
// OpenGL ES backend over Mesa's llvmpipe (see .ci/run). Where no adapter starts, the test is skipped
// and its name says why.
let skip: string | null = null;
try {
  await selectBackend({ backend: 'webgpu' });
} catch (e) {
  skip = ` (skipped: ${(e as Error).message})`;
}

/** Two groups of 3 completions of prompts of different lengths (left-padded rows), seed 7, on `backend`. */
async function sampleOn(backend: BackendName): Promise<PromptSamples[]> {
  const tiny = await tinyPolicy(); // host weights, on the cpu backend
  const host = await tiny.model.toHost();
  await selectBackend({ backend });
  const model = Qwen3Model.fromWeights(tiny.model.config, (name) => host.get(name), { trainable: false });
  try {
    const sampler = policySampler(model, tiny.tokenizer, { batchSize: 6 });
    const params = { temperature: 1, topP: 0.95, topK: 0, maxNewTokens: 24, stop: [], seed: 7 };
    const prompts = [tiny.tokenizer.encode('Ben has 12 apples.'), tiny.tokenizer.encode('Tom has 80 stones. He buys 53 more.')];
    return await sampler.sample(prompts.map((tokens) => ({ prompt: { tokens }, n: 3, params })));
  } finally {
    model.dispose();
    tiny.dispose();
  }
}

describe('webgpu matches cpu on a tiny policy', () => {
  it.skipIf(skip !== null)(`KV-cache sampling under a seed: the same tokens, their log-probs to 1e-5${skip ?? ''}`, async () => {
    const cpu = await sampleOn('cpu');
    const gpu = await sampleOn('webgpu');
    let worst = 0;
    let tokens = 0;
    cpu.forEach((group, g) =>
      group.completions.forEach((c, k) => {
        const w = gpu[g]!.completions[k]!;
        expect(w.tokens).toEqual(c.tokens);
        tokens += c.tokens.length;
        c.logprobs!.forEach((v, t) => {
          worst = Math.max(worst, Math.abs(v - w.logprobs![t]!));
        });
      }),
    );
    console.info(`webgpu vs cpu, KV-cache sampling: ${tokens} tokens identical, log-probs max |diff| ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-5);
    expect(tokens).toBeGreaterThan(30);
  });
});
