import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_NAMES, getSpans, type RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { perturbation, perturbedTokens } from './perturbation.js';
import { SaliencyError } from './errors.js';
import { TEST_BACKENDS, fixtureBatch, relError, tinyModel, useBackend } from './test-utils/fixtures.js';

const batch = fixtureBatch();

/**
 * The obviously-correct twin: for every completion token, one single-sequence forward pass of the
 * whole unpadded sequence with that embedding replaced, full `[T, V]` logits, the mean over the
 * answer positions, KL(p0 || p) in float64.
 */
function bruteForce(
  model: Qwen3Model,
  b: RolloutBatch,
  i: number,
  opts: { alignment: 'own' | 'previous'; replacement: 'zero' | number; span: 'boxed' | 'content' },
): Float64Array {
  const sp = getSpans(b, i)!;
  const [a0, a1] = opts.span === 'boxed' ? [sp.open[0], sp.close[1]] : sp.content;
  const prompt = Array.from(b.promptTokens.subarray(b.promptOffsets[i]!, b.promptOffsets[i + 1]!));
  const completion = Array.from(b.completionTokens.subarray(b.completionOffsets[i]!, b.completionOffsets[i + 1]!));
  const ids = [...prompt, ...completion];
  const pl = prompt.length;
  const { D, V } = model.dims;
  const answerDist = (replaceAt: number): Float64Array => {
    const t = tf.tidy(() => {
      const e = model.embed(tf.tensor2d(ids, [1, ids.length], 'int32')).arraySync()[0]!;
      if (replaceAt >= 0)
        e[replaceAt] =
          opts.replacement === 'zero'
            ? new Array(D).fill(0)
            : model.embed(tf.tensor2d([[opts.replacement]], [1, 1], 'int32')).arraySync()[0]![0]!;
      return model.logits({ embeds: tf.tensor3d([e]) });
    });
    const logits = t.arraySync()[0]!;
    t.dispose();
    {
      const mean = new Float64Array(V);
      for (let j = a0; j < a1; j++) for (let v = 0; v < V; v++) mean[v] += logits[pl - 1 + j]![v]! / (a1 - a0);
      const mx = Math.max(...mean);
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(mean[v]! - mx);
      return mean.map((m) => Math.exp(m - mx) / z);
    }
  };
  const p0 = answerDist(-1);
  const out = new Float64Array(completion.length);
  for (let j = 0; j < completion.length; j++) {
    const p = answerDist(opts.alignment === 'own' ? pl + j : pl - 1 + j);
    let kl = 0;
    for (let v = 0; v < V; v++) kl += p0[v]! * (Math.log(p0[v]!) - Math.log(p[v]!));
    out[j] = kl;
  }
  return out;
}

describe.each(TEST_BACKENDS)('perturbation vs a brute-force loop of single forward passes on %s', (backend) => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend(backend);
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it.each([
    { alignment: 'own', replacement: 'zero', answerSpan: 'boxed', tokenBudget: 8192 },
    { alignment: 'previous', replacement: 7, answerSpan: 'content', tokenBudget: 30 },
  ] as const)(
    '$alignment, replacement $replacement, $answerSpan span, budget $tokenBudget',
    async ({ alignment, replacement, answerSpan, tokenBudget }) => {
      const out = await perturbation(model, batch, { alignment, replacement, answerSpan, tokenBudget });
      expect(out.signal).toBe(SIGNAL_NAMES.perturbation);
      expect(Array.from(out.hasScores)).toEqual(answerSpan === 'boxed' ? [1, 1, 0, 1] : [1, 1, 0, 0]);
      for (let i = 0; i < batch.numRollouts; i++) {
        const got = out.scores.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!);
        if (!out.hasScores[i]) {
          expect(got.every((s) => s === 0)).toBe(true);
          continue;
        }
        const want = bruteForce(model, batch, i, { alignment, replacement, span: answerSpan });
        expect(Math.max(...want)).toBeGreaterThan(1e-3); // the replacement matters
        expect(relError(got, want)).toBeLessThan(1e-3);
      }
    },
  );

  it('a window scores only the last tokens before the answer, with the same values; no leak', async () => {
    await perturbation(model, batch, { window: 2 });
    const before = tf.memory().numTensors;
    const full = await perturbation(model, batch);
    const win = await perturbation(model, batch, { window: 2 });
    expect(tf.memory().numTensors).toBe(before);
    // Row 0 (prompt 3, boxed answer [3, 8), own alignment): tokens 0..6 can influence it; the window keeps 5 and 6.
    expect(perturbedTokens(3, 10, [3, 8], { alignment: 'own', window: 2 }).tokens).toEqual([5, 6]);
    const c0 = batch.completionOffsets[0]!;
    for (let j = 0; j < 10; j++) {
      if (j === 5 || j === 6) expect(win.scores[c0 + j]).toBeCloseTo(full.scores[c0 + j]!, 6);
      else expect(win.scores[c0 + j]).toBe(0);
    }
  });

  it('rejects a replacement token outside the vocabulary', async () => {
    await expect(perturbation(model, batch, { replacement: 300 })).rejects.toThrow(SaliencyError);
    await expect(perturbation(model, batch, { replacement: 300 })).rejects.toThrow(
      'replacement token 300 is not in the vocabulary [0, 300)',
    );
  });
});
