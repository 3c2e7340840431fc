import { describe, expect, it } from 'vitest';
import { selectBackend, type BackendName } from '@rlvr/policy';
import { logprobsWithGradXEmb } from './grad-x-emb.js';
import type { FusedResult } from './result.js';
import { fixtureBatch, tinyModel } from './test-utils/fixtures.js';

// The fused GRAIL pass on the webgpu backend against the cpu backend, on the tiny fixture model: in CI
// on Dawn's OpenGL ES backend over Mesa's llvmpipe (see .ci/run). Where no adapter starts, the test is
// skipped and its name says why.
let skip: string | null = null;
try {
  await selectBackend({ backend: 'webgpu' });
} catch (e) {
  skip = ` (skipped: ${(e as Error).message})`;
}

async function fusedOn(backend: BackendName): Promise<FusedResult> {
  await selectBackend({ backend });
  const model = tinyModel();
  try {
    return await logprobsWithGradXEmb(model, fixtureBatch(), { temperature: 0.7, tokenBudget: 64 });
  } finally {
    model.dispose();
  }
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

describe('webgpu matches cpu on the tiny fixture model', () => {
  it.skipIf(skip !== null)(`the fused GRAIL pass: log-probs, entropies and saliency scores, to 1e-5${skip ?? ''}`, async () => {
    const cpu = await fusedOn('cpu');
    const gpu = await fusedOn('webgpu');
    expect(Array.from(gpu.hasScores)).toEqual(Array.from(cpu.hasScores));
    const d = {
      logprobs: maxDiff(gpu.logprobs!, cpu.logprobs!),
      entropy: maxDiff(gpu.entropy!, cpu.entropy!),
      scores: maxDiff(gpu.scores, cpu.scores),
    };
    console.info(`webgpu vs cpu, fused GRAIL pass: max |diff| ${JSON.stringify(d)}`);
    expect(d.logprobs).toBeLessThan(1e-5);
    expect(d.entropy).toBeLessThan(1e-5);
    expect(d.scores).toBeLessThan(1e-5);
    expect(Math.max(...cpu.scores)).toBeGreaterThan(1e-3); // scores of real size: the comparison means something
  });
});
