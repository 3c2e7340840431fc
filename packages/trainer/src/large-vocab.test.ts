import { batchFromRows, Rng } from '@rlvr/core';
import { batchLogprobs, Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tf } from './tf.js';
import { Trainer } from './trainer.js';

/**
 * Qwen3's vocabulary (151,936) with a tiny hidden size, so that the vocabulary dominates: one
 * training micro-step and one log-prob pass must never hold a `[B, T, V]` float32 tensor, neither
 * as one tensor nor in peak memory (tfjs's own accounting of live tensor bytes, `tf.profile`).
 * The chunked log-softmax of @rlvr/policy is what keeps them apart: with one chunk over the whole
 * batch (no chunking) both checks fail.
 */
const V = 151_936;
const config = parseModelConfig({
  vocab_size: V,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  tie_word_embeddings: true,
});
const B = 4;
const P = 8;
const C = 200;
/** Elements of one `[B, T, V]` tensor over the completion columns the loss covers (the smallest such T). */
const BTV = B * C * V;

let model: Qwen3Model;
const rng = new Rng(3);
const tokens = (n: number) => Array.from({ length: n }, () => rng.int(V));
const batch = batchFromRows(
  Array.from({ length: B }, (_, i) => ({ group: Math.floor(i / 2), reward: i % 2, prompt: tokens(P), completion: tokens(C) })),
);
const oldLogprobs = new Float32Array(B * C).fill(-Math.log(V)); // the step's ratio starts near 1
const advantages = Float32Array.from({ length: B * C }, (_, t) => ((t % 5) - 2) / 2);

beforeAll(async () => {
  await selectBackend({ backend: 'wasm' });
  tf.env().set('CHECK_COMPUTATION_FOR_ERRORS', false); // tf.profile would read back every output
  model = Qwen3Model.random(config, 0);
});
afterAll(() => model.dispose());

/** Peak bytes of live tensors above those before, and the most elements any kernel output had, while fn runs. */
async function footprint(fn: () => void | Promise<void>): Promise<{ peakBytes: number; largest: number; kernels: number }> {
  const before = tf.memory().numBytes;
  const info = await tf.profile(fn);
  let largest = 0;
  for (const k of info.kernels)
    for (const s of k.outputShapes)
      largest = Math.max(
        largest,
        s.reduce((a, b) => a * b, 1),
      );
  return { peakBytes: info.peakBytes - before, largest, kernels: info.kernels.length };
}

describe(`a vocabulary of ${V} (Qwen3): no [B, T, V] tensor`, () => {
  test('one training micro-step (forward, backward, AdamW) stays below one [B, T, V] float32 tensor', async () => {
    const trainer = new Trainer(model, { tokenBudget: B * (P + C) });
    const rows = [...Array(B).keys()];
    let loss = Number.NaN;
    const before = model.param('model.embed_tokens.weight').dataSync().slice(0, 8);
    const f = await footprint(async () => {
      // Trainer.step's two halves (the same calls), with a turn of the event loop between them so
      // that the test worker stays responsive on a busy machine.
      const { loss: l, grads } = await trainer.gradients(batch, rows, advantages, oldLogprobs);
      loss = l;
      await new Promise((resolve) => setImmediate(resolve));
      trainer.optimizer.apply(model.params, grads, 1e-3);
      for (const g of grads.values()) g.dispose();
    });
    expect(Number.isFinite(loss)).toBe(true);
    // the update happened (the tied embedding moved)
    expect(model.param('model.embed_tokens.weight').dataSync().slice(0, 8)).not.toEqual(before);
    expect(f.kernels).toBeGreaterThan(100); // the profile saw the whole step
    expect(f.largest).toBeLessThan(BTV / 8);
    expect(f.peakBytes).toBeLessThan(BTV * 4);
  }, 300_000);

  test('one log-prob pass (batchLogprobs) stays below one [B, T, V] float32 tensor', async () => {
    let n = 0;
    const f = await footprint(async () => {
      const r = await batchLogprobs(model, batch, { tokenBudget: B * (P + C) });
      n = r.logprobs.length;
      expect(r.logprobs.every((x) => Number.isFinite(x) && x < 0)).toBe(true);
    });
    expect(n).toBe(B * C);
    expect(f.largest).toBeLessThan(BTV / 8);
    expect(f.peakBytes).toBeLessThan(BTV * 4);
  }, 300_000);
});
