import { describe, expect, it } from 'vitest';
import { Qwen3Model, batchLogprobs, selectBackend, type BackendName } from '@rlvr/policy';
import { advantagesOf, makeBatch, tinyConfig } from './test-utils/batches.js';
import { Trainer } from './trainer.js';

// A training step's gradients on the webgpu backend against the cpu backend: in CI on Dawn's OpenGL ES
// backend over Mesa's llvmpipe (see .ci/run). Where no adapter starts, the test is skipped and its name
// says why.
let skip: string | null = null;
try {
  await selectBackend({ backend: 'webgpu' });
} catch (e) {
  skip = ` (skipped: ${(e as Error).message})`;
}

/** The loss and host gradients of one optimizer step over the whole batch, the old log-probs off the policy (ratios away from 1). */
async function stepOn(backend: BackendName): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
  await selectBackend({ backend });
  const model = Qwen3Model.random(tinyConfig, 3, 0.3); // host-drawn: the same weights on every backend
  try {
    const batch = makeBatch();
    const old = (await batchLogprobs(model, batch, { tokenBudget: 4096 })).logprobs.map((v, t) => v - 0.05 * Math.sin(t));
    const rows = Array.from({ length: batch.numRollouts }, (_, i) => i);
    const { loss, grads } = await new Trainer(model, { tokenBudget: 40 }).gradients(batch, rows, advantagesOf(batch), old);
    const host = new Map<string, Float32Array>();
    for (const [k, g] of grads) host.set(k, (await g.data()) as Float32Array);
    for (const g of grads.values()) g.dispose();
    return { loss, grads: host };
  } finally {
    model.dispose();
  }
}

describe('webgpu matches cpu on a tiny model', () => {
  it.skipIf(skip !== null)(`a training step's loss and gradients (every parameter), to 1e-5${skip ?? ''}`, async () => {
    const cpu = await stepOn('cpu');
    const gpu = await stepOn('webgpu');
    expect([...gpu.grads.keys()]).toEqual([...cpu.grads.keys()]);
    let worst = 0;
    let scale = 0;
    for (const [k, c] of cpu.grads) {
      const g = gpu.grads.get(k)!;
      c.forEach((v, i) => {
        worst = Math.max(worst, Math.abs(v - g[i]!));
        scale = Math.max(scale, Math.abs(v));
      });
    }
    console.info(
      `webgpu vs cpu, training step: loss |diff| ${Math.abs(gpu.loss - cpu.loss).toExponential(2)}, gradients max |diff| ${worst.toExponential(2)} (max |gradient| ${scale.toExponential(2)})`,
    );
    expect(Math.abs(gpu.loss - cpu.loss)).toBeLessThan(1e-5);
    expect(worst).toBeLessThan(1e-5);
    expect(scale).toBeGreaterThan(1e-3); // gradients of real size: the comparison means something
  });
});
