import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel } from './checkpoint.js';
import type { Qwen3Model } from './model.js';
import { DEFAULT_TRANSPOSE_CACHE_BYTES, setTransposeCacheLimit, transposeCacheBytes } from './ops.js';
import { TEST_BACKENDS, TINY_DIR, reference, relError, tensorOf, useBackend } from './test-utils/fixtures.js';

const ref = reference();
const [B, T] = ref.get('input_ids')!.shape;
const maskData = ref.get('attention_mask')!.data;
const tmaskData = ref.get('target_mask')!.data;
const V = 300;
const D = 64;
/** Only positions that are real tokens are compared (pad rows are garbage by design). */
const real = (width: number) => (i: number) => maskData[Math.floor(i / width)] === 1;

// `uncached`: no weight transpose may be cached (a model larger than the cache, e.g. Qwen3-0.6B on
// wasm), so every product runs as (W @ x^T)^T; the values and gradients must be the same.
const cases = TEST_BACKENDS.flatMap((b) => [[b, 'cached'] as const, [b, 'uncached'] as const]);
describe.each(cases)('Qwen3Model vs PyTorch on %s, weight transposes %s', (backend, cache) => {
  let model: Qwen3Model;
  let ids: tf.Tensor2D;
  let mask: tf.Tensor2D;
  beforeAll(async () => {
    await useBackend(backend);
    setTransposeCacheLimit(cache === 'cached' ? DEFAULT_TRANSPOSE_CACHE_BYTES : 0);
    model = loadModel(TINY_DIR);
    ids = tensorOf(ref.get('input_ids')!) as tf.Tensor2D;
    mask = tensorOf(ref.get('attention_mask')!) as tf.Tensor2D;
  });
  afterAll(() => {
    // the products above went the way this case names
    if (cache === 'cached') expect(transposeCacheBytes()).toBeGreaterThan(0);
    else expect(transposeCacheBytes()).toBe(0);
    model.dispose();
    expect(transposeCacheBytes()).toBe(0);
    setTransposeCacheLimit(DEFAULT_TRANSPOSE_CACHE_BYTES);
    tf.dispose([ids, mask]);
  });

  it('logits and hidden states match (rel. error <= 1e-4) on a left- and right-padded batch', () => {
    const logits = model.logits({ ids, attentionMask: mask });
    expect(logits.shape).toEqual([B, T, V]);
    expect(relError(logits.dataSync(), ref.get('logits')!.data, real(V))).toBeLessThan(1e-4);
    const hidden = model.hidden({ ids, attentionMask: mask });
    expect(relError(hidden.dataSync(), ref.get('hidden')!.data, real(D))).toBeLessThan(1e-4);
    tf.dispose([logits, hidden]);
  });

  it('token log-probs and entropies match (rel. error <= 1e-4), chunked and unchunked', () => {
    const targets = tensorOf(ref.get('targets')!) as tf.Tensor2D;
    const tm = (i: number) => tmaskData[i] === 1;
    for (const maxChunkElements of [undefined, 2 * V * B]) {
      const out = tf.tidy(() => {
        const h = model.hidden({ ids, attentionMask: mask });
        const r = model.tokenLogprobs(h, targets, { maxChunkElements });
        return [r.logprobs.dataSync(), r.entropy.dataSync()];
      });
      expect(relError(out[0], ref.get('logprobs')!.data, tm)).toBeLessThan(1e-4);
      expect(relError(out[1], ref.get('entropy')!.data, tm)).toBeLessThan(1e-4);
    }
    targets.dispose();
  });

  it('gradients w.r.t. input embeddings and parameters match (rel. error <= 1e-3)', () => {
    const targets = tensorOf(ref.get('targets')!) as tf.Tensor2D;
    const tmask = tensorOf(ref.get('target_mask')!);
    const w = tensorOf(ref.get('loss_weights')!);
    const embeds = model.embed(ids);
    const lossOf = (e: tf.Tensor3D) => {
      const h = model.hidden({ embeds: e, attentionMask: mask });
      const { logprobs, entropy } = model.tokenLogprobs(h, targets, { maxChunkElements: 4 * V * B });
      return tf.add(tf.neg(tf.sum(tf.mul(tf.mul(tmask, w), logprobs))), tf.mul(0.1, tf.sum(tf.mul(tmask, entropy)))) as tf.Scalar;
    };
    // Embeddings as the leaf (saliency): no parameter gradients.
    const { value, grad } = tf.valueAndGrad(lossOf)(embeds);
    expect(relError(value.dataSync(), ref.get('loss')!.data)).toBeLessThan(1e-4);
    expect(relError(grad.dataSync(), ref.get('grad.embeds')!.data, real(D))).toBeLessThan(1e-3);
    // Parameters (training): the loss from ids, embedding gather included.
    const names = [
      'model.embed_tokens.weight',
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.1.self_attn.k_norm.weight',
      'model.layers.1.mlp.down_proj.weight',
      'model.norm.weight',
    ];
    const { grads } = tf.variableGrads(
      () => lossOf(model.embed(ids)),
      names.map((n) => model.param(n)),
    );
    for (const n of names) {
      const g = grads[model.param(n).name];
      expect(relError(g.dataSync(), ref.get('grad.' + n)!.data), n).toBeLessThan(1e-3);
    }
    tf.dispose([targets, tmask, w, embeds, value, grad, ...Object.values(grads)]);
  }, 300_000);

  it('KV-cache decoding gives the logits of the full forward pass (rel. error <= 1e-4)', () => {
    // row 0 of the reference batch (no padding): prefill its first 4 tokens, decode the rest one by one
    const n = (maskData as Int32Array).subarray(0, T).reduce((a, b) => a + b, 0);
    const row = tf.slice(ids, [0, 0], [1, n]) as tf.Tensor2D;
    const full = tf.tidy(() => tf.reshape(model.logits({ ids: row }), [n, V]).arraySync() as number[][]);
    const { logits, cache: kv } = model.prefill(tf.slice(row, [0, 0], [1, 4]) as tf.Tensor2D);
    const steps = [logits.dataSync()];
    logits.dispose();
    const rowIds = row.dataSync();
    for (let t = 4; t < n; t++) {
      const l = model.decodeStep(kv, tf.tensor1d([rowIds[t]!], 'int32'));
      steps.push(l.dataSync());
      l.dispose();
    }
    kv.dispose();
    row.dispose();
    steps.forEach((s, k) => expect(relError(s, full[3 + k]!)).toBeLessThan(1e-4));
  });
});
