import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_NAMES } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { GradXEmbConfigSchema, gradXEmbRows, logprobsWithGradXEmb } from './grad-x-emb.js';
import { packRows } from './layout.js';
import { TEST_BACKENDS, fixtureBatch, reference, relError, tinyModel, unpackRows, useBackend } from './test-utils/fixtures.js';

const ref = reference();
const batch = fixtureBatch();
const P = ref.get('P')!.data[0]!;
const C = ref.get('C')!.data[0]!;
const [B, S] = ref.get('ids')!.shape as [number, number];
const mask = ref.get('mask')!.data;
const D = 64;
const VARIANTS = [
  { name: 'boxed_t1', answerSpan: 'boxed', temperature: 1 },
  { name: 'content_t1', answerSpan: 'content', temperature: 1 },
  { name: 'boxed_t07', answerSpan: 'boxed', temperature: 0.7 },
] as const;
/** Real completion tokens of the packed `[B, C]` layout. */
const realToken = (i: number) => mask[Math.floor(i / C) * S + P + (i % C)] === 1;

describe.each(TEST_BACKENDS)('grad-x-emb (GRAIL) vs PyTorch autograd on %s', (backend) => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend(backend);
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it.each(VARIANTS)('$name: L_ans, dL_ans/de and both alignments match (rel. error <= 1e-3)', async ({ name, answerSpan, temperature }) => {
    const packed = packRows(batch, [0, 1, 2, 3], answerSpan);
    expect(Array.from(packed.ids)).toEqual(Array.from(ref.get('ids')!.data));
    for (const alignment of ['previous', 'own'] as const) {
      const cfg = GradXEmbConfigSchema.parse({ answerSpan, temperature, alignment });
      const r = await gradXEmbRows(model, packed, cfg, { keepGradient: true });
      expect(relError(r.loss, ref.get(`grail.${name}.loss`)!.data)).toBeLessThan(1e-4);
      // Gradient at real positions from column P - 1 on: padding embeddings get none by
      // construction, and the prompt columns before P - 1 run without a gradient (no score reads them).
      const computed = (i: number) => mask[Math.floor(i / D)] === 1 && Math.floor(i / D) % S >= P - 1;
      expect(relError(r.gradient!, ref.get(`grail.${name}.grad`)!.data, computed)).toBeLessThan(1e-3);
      expect(r.gradient!.every((v, i) => Math.floor(i / D) % S >= P - 1 || v === 0)).toBe(true);
      expect(relError(r.scores!, ref.get(`grail.${name}.scores.${alignment}`)!.data, realToken)).toBeLessThan(1e-3);
    }
  });

  it('the fused pass gives the old log-probs of the same forward, micro-batched, with rollouts without an answer flagged', async () => {
    for (const { name, answerSpan, temperature } of VARIANTS) {
      // A budget of 2 rows per pass: the rollouts are split over micro-batches of different P and C.
      const out = await logprobsWithGradXEmb(model, batch, { answerSpan, temperature, tokenBudget: 2 * 14 });
      expect(out.signal).toBe(SIGNAL_NAMES.gradXEmb);
      const want = unpackRows(batch, ref.get(`grail.${name}.scores.previous`)!.data, C);
      expect(relError(out.scores, want)).toBeLessThan(1e-3);
      expect(relError(out.loss!, ref.get(`grail.${name}.loss`)!.data)).toBeLessThan(1e-4);
      // Row 2 has no answer; row 3's content span is empty.
      expect(Array.from(out.hasScores)).toEqual(answerSpan === 'boxed' ? [1, 1, 0, 1] : [1, 1, 0, 0]);
      expect(out.missing).toBe(answerSpan === 'boxed' ? 1 : 2);
      const c2 = batch.completionOffsets[2]!;
      expect(Array.from(out.scores.subarray(c2, batch.completionOffsets[3]!)).every((s) => s === 0)).toBe(true);
      expect(out.scores.every((s) => Number.isFinite(s) && s >= 0)).toBe(true);
      const lpName = temperature === 1 ? 'logprobs.t1' : 'logprobs.t07';
      expect(relError(out.logprobs, unpackRows(batch, ref.get(lpName)!.data, C))).toBeLessThan(1e-4);
      if (temperature === 1) expect(relError(out.entropy, unpackRows(batch, ref.get('entropy.t1')!.data, C))).toBeLessThan(1e-4);
    }
  });

  it('leaks no tensors and leaves the parameters untouched', async () => {
    await logprobsWithGradXEmb(model, batch); // warm-up (backend-level caches)
    const before = tf.memory().numTensors;
    const snapshot = model.variables().map((v) => v.dataSync().slice(0, 4));
    await logprobsWithGradXEmb(model, batch, { alignment: 'own', tokenBudget: 20 });
    expect(tf.memory().numTensors).toBe(before);
    model.variables().forEach((v, i) => expect(Array.from(v.dataSync().slice(0, 4))).toEqual(Array.from(snapshot[i]!)));
  });

  it('skips the backward pass for a micro-batch without answers, and still returns its log-probs', async () => {
    const before = tf.memory().numTensors;
    const packed = packRows(batch, [2], 'boxed');
    const r = await gradXEmbRows(model, packed, GradXEmbConfigSchema.parse({}));
    expect(r.scores).toBeNull();
    expect(r.loss[0]).toBe(0);
    const want = ref.get('logprobs.t1')!.data;
    // Row 2 alone has no prompt padding: same log-probs as in the padded reference batch.
    for (let j = 0; j < 7; j++) expect(r.logprobs[j]).toBeCloseTo(want[2 * C + j]!, 4);
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('grad-x-emb vs central finite differences of L_ans (cpu)', () => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend('cpu');
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it("directional derivatives along single coordinates and along a token's own embedding", async () => {
    const packed = packRows(batch, [0, 1, 2, 3], 'boxed');
    const cfg = GradXEmbConfigSchema.parse({});
    const { gradient } = await gradXEmbRows(model, packed, cfg, { keepGradient: true });
    const ids = tf.tensor2d(packed.ids, [B, S], 'int32');
    const attn = tf.tensor2d(packed.attentionMask, [B, S]);
    const E = model.embed(ids);
    const e = E.dataSync() as Float32Array;
    /** L_ans at embeddings `e + eps * dir` (forward only; float64 sum on the host). */
    const lossAt = (dir: Float32Array, eps: number): number =>
      tf.tidy(() => {
        const x = tf.add(E, tf.mul(tf.tensor3d(dir, [B, S, D]), eps)) as tf.Tensor3D;
        const h = tf.slice(model.hidden({ embeds: x, attentionMask: attn }), [0, P - 1, 0], [B, C, D]) as tf.Tensor3D;
        const lp = model.tokenLogprobs(h, tf.slice(ids, [0, P], [B, C]) as tf.Tensor2D).logprobs.dataSync();
        let L = 0;
        for (let i = 0; i < lp.length; i++) L -= packed.answerMask[i]! * lp[i]!;
        return L;
      });
    const g = gradient!;
    // The three largest gradient coordinates.
    const order = Array.from(g.keys())
      .sort((a, b) => Math.abs(g[b]!) - Math.abs(g[a]!))
      .slice(0, 3);
    for (const k of order) {
      const dir = new Float32Array(B * S * D);
      dir[k] = 1;
      const h = 1e-2;
      const fd = (lossAt(dir, h) - lossAt(dir, -h)) / (2 * h);
      expect(Math.abs(fd - g[k]!) / Math.abs(g[k]!)).toBeLessThan(2e-2);
    }
    // Along a token's own embedding: d/de L . e_t = sum_d g_d e_d (scale the token by 1 +- eps).
    for (const [row, col] of [
      [0, P + 2],
      [1, P + 3],
      [3, P - 1],
    ] as const) {
      const dir = new Float32Array(B * S * D);
      let dot = 0;
      for (let d = 0; d < D; d++) {
        const k = (row * S + col) * D + d;
        dir[k] = e[k]!;
        dot += g[k]! * e[k]!;
      }
      const h = 1e-2;
      const fd = (lossAt(dir, h) - lossAt(dir, -h)) / (2 * h);
      expect(Math.abs(fd - dot)).toBeLessThan(2e-2 * Math.max(Math.abs(dot), 0.05));
    }
    tf.dispose([ids, attn, E]);
  });
});
