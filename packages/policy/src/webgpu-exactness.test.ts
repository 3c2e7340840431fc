import { describe, expect, it } from 'vitest';
import { Rng } from '@rlvr/core';
import { selectBackend, type BackendName } from './backend.js';
import { loadModel } from './checkpoint.js';
import { completionLogprobs, type SequenceRow } from './sequences.js';
import { TINY_DIR } from './test-utils/fixtures.js';
import { webgpuSkip } from './test-utils/webgpu.js';

// The webgpu backend against the cpu backend on the tiny fixture model: in CI on Dawn's OpenGL ES
// backend over Mesa's llvmpipe (see .ci/run). Skipped, saying why in the name, where no adapter starts.
const skip = await webgpuSkip();

/** Rows of random prompts and completions over the fixture's 300-token vocabulary. */
function rows(): SequenceRow[] {
  const rng = new Rng(11);
  return Array.from({ length: 6 }, () => ({
    prompt: Array.from({ length: 1 + rng.int(9) }, () => rng.int(300)),
    completion: Array.from({ length: 1 + rng.int(20) }, () => rng.int(300)),
  }));
}

async function logprobsOn(backend: BackendName): Promise<Float32Array[]> {
  await selectBackend({ backend });
  const model = loadModel(TINY_DIR, { trainable: false });
  try {
    return await completionLogprobs(model, rows(), { batchSize: 4, temperature: 0.7 });
  } finally {
    model.dispose();
  }
}

describe('webgpu matches cpu on the tiny fixture model', () => {
  it.skipIf(skip !== null)(`the log-probs of every completion token, to 1e-5${skip ?? ''}`, async () => {
    const cpu = await logprobsOn('cpu');
    const gpu = await logprobsOn('webgpu');
    let worst = 0;
    cpu.forEach((row, r) => {
      expect(gpu[r]!.length).toBe(row.length);
      row.forEach((v, t) => {
        worst = Math.max(worst, Math.abs(v - gpu[r]![t]!));
      });
    });
    console.info(`webgpu vs cpu, tiny fixture log-probs: max |diff| ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-5);
    expect(cpu.flatMap((r) => [...r]).some((v) => v < -1)).toBe(true); // log-probs of random tokens: the comparison means something
  });
});
