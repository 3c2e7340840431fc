import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_NAMES } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { noisyKl } from './noisy-kl.js';
import { SaliencyError } from './errors.js';
import { TEST_BACKENDS, fixtureBatch, reference, relError, tinyModel, unpackRows, useBackend } from './test-utils/fixtures.js';

const ref = reference();
const batch = fixtureBatch();
const C = ref.get('C')!.data[0]!;
const D = 64;
const T = batch.completionTokens.length;

/** The fixture's noise `[B, C, D]` in the batch layout `[totalTokens * D]`. */
function fixtureNoise(): Float32Array {
  const src = ref.get('oarg.noise')!.data;
  const out = new Float32Array(T * D);
  for (let i = 0; i < batch.numRollouts; i++) {
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    out.set(src.subarray(i * C * D, (i * C + cl) * D), c0 * D);
  }
  return out;
}

describe.each(TEST_BACKENDS)('noisy-kl (OAR-G) vs PyTorch autograd on %s', (backend) => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend(backend);
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it.each(['previous', 'own'] as const)(
    'alignment %s: scores with a fixed noise tensor match float64 PyTorch (rel. error <= 1e-3)',
    async (alignment) => {
      for (const tokenBudget of [8192, 28]) {
        const out = await noisyKl(model, batch, { alignment, noise: fixtureNoise(), tokenBudget });
        expect(out.signal).toBe(SIGNAL_NAMES.noisyKl);
        expect(relError(out.scores, unpackRows(batch, ref.get(`oarg.${alignment}.scores`)!.data, C))).toBeLessThan(1e-3);
        expect(Array.from(out.hasScores)).toEqual([1, 1, 0, 1]);
        // At noise 1e-3 the KL (~5e-7) is a difference of nearly equal float32 numbers, so its
        // value is rounding noise (PyTorch's own float32 KL is 20% off the float64 one); its
        // gradient p_noisy - p0 is well conditioned. The KL is checked at 100x the noise below.
        expect(out.loss!.every((v) => Number.isFinite(v))).toBe(true);
      }
    },
  );

  it('at 100x the noise, where the KL is well conditioned, KL and scores match (rel. error <= 1e-3)', async () => {
    const noise = fixtureNoise().map((v) => 100 * v);
    const out = await noisyKl(model, batch, { noise });
    expect(relError(out.loss!, ref.get('oarg.x100.previous.kl')!.data)).toBeLessThan(1e-3);
    expect(relError(out.scores, unpackRows(batch, ref.get('oarg.x100.previous.scores')!.data, C))).toBeLessThan(1e-3);
  });

  it('seeded noise: same seed same scores whatever the micro-batching, another seed other scores; no leak', async () => {
    await noisyKl(model, batch, { seed: 3 });
    const before = tf.memory().numTensors;
    const a = await noisyKl(model, batch, { seed: 3 });
    const b = await noisyKl(model, batch, { seed: 3, tokenBudget: 20 });
    const c = await noisyKl(model, batch, { seed: 4 });
    expect(tf.memory().numTensors).toBe(before);
    // Other micro-batches pad to other widths and split off other prompt prefixes: float32 noise
    // (at noise 1e-3 the KL is ~1e-7 and its gradient cancels), far below another seed's change.
    expect(relError(b.scores, a.scores)).toBeLessThan(1e-4);
    expect(relError(c.scores, a.scores)).toBeGreaterThan(1e-3);
    expect(a.scores.every((s) => Number.isFinite(s) && s >= 0)).toBe(true);
    // The KL at noise 1e-3 is tiny but positive on rows with an answer.
    expect(a.loss![0]).toBeGreaterThan(0);
    expect(a.loss![2]).toBe(0);
  });

  it('rejects a noise tensor of the wrong length, naming the expected size', async () => {
    await expect(noisyKl(model, batch, { noise: new Float32Array(10) })).rejects.toThrow(SaliencyError);
    await expect(noisyKl(model, batch, { noise: new Float32Array(10) })).rejects.toThrow(
      `expected totalTokens x hidden size = ${T} x ${D}`,
    );
  });
});
