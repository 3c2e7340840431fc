import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel } from './checkpoint.js';
import type { Qwen3Model } from './model.js';
import { TEST_BACKENDS, TINY_DIR, reference, relError, tensorOf, useBackend } from './test-utils/fixtures.js';

/**
 * `hidden({ weightGrad: false })`: the input-only backward of saliency. Same input gradients as
 * the training mode (and as PyTorch), and none of the weight-gradient kernels.
 */
const ref = reference();
const maskData = ref.get('attention_mask')!.data;
const D = 64;
const real = (i: number) => maskData[Math.floor(i / D)] === 1;

describe.each(TEST_BACKENDS)('input-only backward (weightGrad: false) on %s', (backend) => {
  let model: Qwen3Model;
  let ids: tf.Tensor2D;
  let mask: tf.Tensor2D;
  let targets: tf.Tensor2D;
  let tmask: tf.Tensor;
  beforeAll(async () => {
    await useBackend(backend);
    model = loadModel(TINY_DIR);
    ids = tensorOf(ref.get('input_ids')!) as tf.Tensor2D;
    mask = tensorOf(ref.get('attention_mask')!) as tf.Tensor2D;
    targets = tensorOf(ref.get('targets')!) as tf.Tensor2D;
    tmask = tensorOf(ref.get('target_mask')!);
  });
  afterAll(() => {
    model.dispose();
    tf.dispose([ids, mask, targets, tmask]);
  });

  /** d(loss)/d(embeds) `[B, T, D]` of a log-prob + entropy loss, as a host array. */
  const inputGrad = (weightGrad: boolean, checkpoint: boolean): Float32Array =>
    tf.tidy(() => {
      const w = tensorOf(ref.get('loss_weights')!);
      const lossOf = (e: tf.Tensor) => {
        const h = model.hidden({ embeds: e as tf.Tensor3D, attentionMask: mask, weightGrad, checkpoint });
        const { logprobs, entropy } = model.tokenLogprobs(h, targets, { weightGrad });
        return tf.add(tf.neg(tf.sum(tf.mul(tf.mul(tmask, w), logprobs))), tf.mul(0.1, tf.sum(tf.mul(tmask, entropy)))) as tf.Scalar;
      };
      return tf.grad(lossOf)(model.embed(ids)).dataSync() as Float32Array;
    });

  it('gives the input gradients of the training mode and of PyTorch, with and without checkpointing, leaking nothing', () => {
    const full = inputGrad(true, false);
    const before = tf.memory().numTensors;
    for (const checkpoint of [false, true]) {
      const only = inputGrad(false, checkpoint);
      // The same products in the same order: equal up to float32 reassociation at most.
      expect(relError(only, full), `checkpoint ${checkpoint}`).toBeLessThan(1e-6);
      expect(relError(only, ref.get('grad.embeds')!.data, real)).toBeLessThan(1e-3);
    }
    expect(tf.memory().numTensors).toBe(before);
  }, 300_000);

  it('the forward values are unchanged', () => {
    const [a, b] = tf.tidy(() => [
      model.hidden({ ids, attentionMask: mask }).dataSync(),
      model.hidden({ ids, attentionMask: mask, weightGrad: false }).dataSync(),
    ]);
    expect(relError(b, a)).toBe(0);
    const [la, lb] = tf.tidy(() => [
      model.logits({ ids, attentionMask: mask }).dataSync(),
      model.logits({ ids, attentionMask: mask, weightGrad: false }).dataSync(),
    ]);
    expect(relError(lb, la)).toBe(0);
  });

  it('runs no weight-gradient kernel: no product with a weight-shaped output, no reduction to a norm weight', async () => {
    const weightShapes = new Set([...model.params.values()].map((v) => JSON.stringify(v.shape)));
    const [B, T] = ids.shape;
    // Activations are [B*T, ·] or [B, ·, ·]: make sure no weight shape can be mistaken for one.
    for (const s of weightShapes) expect(JSON.parse(s)[0], s).not.toBe(B * T);
    const count = async (weightGrad: boolean, checkpoint: boolean) => {
      const p = await tf.profile(() => {
        inputGrad(weightGrad, checkpoint);
      });
      const weightShaped = (k: (typeof p.kernels)[number]) => k.outputShapes.some((s) => weightShapes.has(JSON.stringify(s)));
      return {
        products: p.kernels.filter((k) => k.name === 'BatchMatMul' && weightShaped(k)).length,
        reductions: p.kernels.filter((k) => k.name === 'Sum' && weightShaped(k)).length,
      };
    };
    const L = model.config.num_hidden_layers;
    // Training mode: dW of q, k, v, o, gate, up, down per layer, and of the LM head (the positive control).
    const train = await count(true, false);
    expect(train.products).toBeGreaterThanOrEqual(7 * L + 1);
    // dw of every RMSNorm: 2 per layer + q/k norms + the final norm.
    expect(train.reductions).toBeGreaterThanOrEqual(4 * L + 1);
    for (const checkpoint of [false, true]) {
      expect(await count(false, checkpoint), `checkpoint ${checkpoint}`).toEqual({ products: 0, reductions: 0 });
    }
  }, 300_000);
});
