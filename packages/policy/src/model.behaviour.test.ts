import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { parseModelConfig } from './config.js';
import { tokenLogprobs, tokenLogprobsReference } from './logprobs.js';
import { Qwen3Model } from './model.js';
import { PolicyError } from './errors.js';
import { TEST_BACKENDS, relError, useBackend } from './test-utils/fixtures.js';

const config = parseModelConfig({
  model_type: 'qwen3',
  vocab_size: 97,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 8,
  rope_theta: 1000,
  tie_word_embeddings: true,
});

describe.each(TEST_BACKENDS)('Qwen3Model behaviour on %s', (backend) => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend(backend);
    model = Qwen3Model.random(config, 3, 0.2);
  });
  afterAll(() => model.dispose());

  it('a left-padded row gives the same outputs as the unpadded sequence', () => {
    const seq = [5, 9, 17, 3, 44, 60];
    const [a, b] = tf.tidy(() => {
      const alone = model.logits({ ids: tf.tensor2d([seq], undefined, 'int32') });
      const padded = model.logits({
        ids: tf.tensor2d([[0, 0, ...seq]], undefined, 'int32'),
        attentionMask: tf.tensor2d([[0, 0, 1, 1, 1, 1, 1, 1]], undefined, 'int32'),
      });
      return [alone.dataSync(), tf.slice(padded, [0, 2, 0], [1, 6, 97]).dataSync()];
    });
    expect(relError(b, a)).toBeLessThan(1e-5);
  });

  it('long rows (wasm: per-group attention, bias split shared by the layers): each padded row equals its sequence alone', () => {
    // G * T >= 64 query rows per group: the per-group attention path on wasm; 3 rows with
    // different left padding, so a bias row used for the wrong batch row (or a stale split) shows.
    const seqs = [40, 36, 33].map((len, r) => Array.from({ length: len }, (_, i) => 1 + ((i * 31 + r * 17) % 96)));
    const T = 40;
    const ids = seqs.map((s) => [...new Array(T - s.length).fill(0), ...s]);
    const mask = seqs.map((s) => [...new Array(T - s.length).fill(0), ...new Array(s.length).fill(1)]);
    tf.tidy(() => model.hidden({ ids: tf.tensor2d([seqs[0]], undefined, 'int32') })); // warm the weights' cached transposes
    const before = tf.memory().numTensors;
    for (const weightGrad of [true, false]) {
      const padded = tf.tidy(() =>
        model
          .hidden({ ids: tf.tensor2d(ids, undefined, 'int32'), attentionMask: tf.tensor2d(mask, undefined, 'int32'), weightGrad })
          .dataSync(),
      );
      seqs.forEach((s, r) => {
        const alone = tf.tidy(() => model.hidden({ ids: tf.tensor2d([s], undefined, 'int32') }).dataSync());
        const D = config.hidden_size;
        const row = padded.subarray((r * T + T - s.length) * D, (r + 1) * T * D);
        expect(relError(row, alone), `row ${r}`).toBeLessThan(1e-5);
      });
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  it('KV-cache decoding gives the logits of the full forward pass, with left padding and a masked step', () => {
    // Row 0: prompt [7, 8, 9]; row 1: left-padded prompt [11]. Then 3 decode steps, row 1's second one masked out.
    const prompt = tf.tensor2d(
      [
        [7, 8, 9],
        [0, 0, 11],
      ],
      undefined,
      'int32',
    );
    const pmask = tf.tensor2d(
      [
        [1, 1, 1],
        [0, 0, 1],
      ],
      undefined,
      'int32',
    );
    const steps = [
      [20, 21],
      [22, 23],
      [24, 25],
    ];
    const stepMasks = [
      [1, 1],
      [1, 0],
      [1, 1],
    ];
    const before = tf.memory().numTensors;
    const { logits: first, cache } = model.prefill(prompt, pmask);
    const got: Float32Array[] = [first.dataSync() as Float32Array];
    first.dispose();
    for (let s = 0; s < steps.length; s++) {
      const l = tf.tidy(() => model.decodeStep(cache, tf.tensor1d(steps[s], 'int32'), tf.tensor1d(stepMasks[s], 'float32')));
      got.push(l.dataSync() as Float32Array);
      l.dispose();
    }
    expect(cache.length).toBe(6);
    cache.dispose();
    expect(tf.memory().numTensors).toBe(before);
    // Reference: one full forward over prompt + steps with the combined mask.
    const allIds = [
      [7, 8, 9, 20, 22, 24],
      [0, 0, 11, 21, 23, 25],
    ];
    const allMask = [
      [1, 1, 1, 1, 1, 1],
      [0, 0, 1, 1, 0, 1],
    ];
    const full = tf.tidy(() =>
      model.logits({ ids: tf.tensor2d(allIds, undefined, 'int32'), attentionMask: tf.tensor2d(allMask, undefined, 'int32') }).arraySync(),
    );
    for (let s = 0; s < got.length; s++) {
      for (let b = 0; b < 2; b++) {
        if (allMask[b][2 + s] === 0) continue; // a masked step's own logits are not meaningful
        expect(relError(got[s].subarray(b * 97, (b + 1) * 97), full[b][2 + s]), `step ${s} row ${b}`).toBeLessThan(1e-4);
      }
    }
    tf.dispose([prompt, pmask]);
  });

  it('chunked log-probs (custom gradient) equal the full log-softmax, values and gradients, with temperature', () => {
    const h = tf.randomNormal([2, 5, 32], 0, 1, 'float32', 1) as tf.Tensor3D;
    const W = tf.randomNormal([97, 32], 0, 0.5, 'float32', 2) as tf.Tensor2D;
    const tg = tf.tensor2d(
      [
        [1, 2, 3, 4, 96],
        [0, 50, 50, 7, 8],
      ],
      undefined,
      'int32',
    );
    const c = tf.randomUniform([2, 5], 0.5, 1.5, 'float32', 3);
    const loss = (f: typeof tokenLogprobs) => (hh: tf.Tensor, ww: tf.Tensor) => {
      const r = f(hh as tf.Tensor3D, ww as tf.Tensor2D, tg, { temperature: 0.7, maxChunkElements: 2 * 97 * 2 });
      return tf.add(tf.sum(tf.mul(r.logprobs, c)), tf.sum(tf.mul(r.entropy, tf.sub(2, c)))) as tf.Scalar;
    };
    const ref = (hh: tf.Tensor3D, ww: tf.Tensor2D, t: tf.Tensor2D, o?: { temperature?: number }) =>
      tokenLogprobsReference(hh, ww, t, o?.temperature ?? 1);
    const fast = tf.grads(loss(tokenLogprobs))([h, W]);
    const slow = tf.grads(loss(ref as typeof tokenLogprobs))([h, W]);
    expect(relError(fast[0].dataSync(), slow[0].dataSync())).toBeLessThan(1e-5);
    expect(relError(fast[1].dataSync(), slow[1].dataSync())).toBeLessThan(1e-5);
    // A weight that is a variable (a model's LM head) is read at backward time instead of saved: same gradients.
    const Wv = tf.variable(W, false);
    const live = tf.grads(loss(tokenLogprobs))([h, Wv]);
    expect(relError(live[0].dataSync(), slow[0].dataSync())).toBeLessThan(1e-5);
    expect(relError(live[1].dataSync(), slow[1].dataSync())).toBeLessThan(1e-5);
    tf.dispose([Wv, ...live]);
    // weightGrad: false gives the same hidden-state gradient.
    const onlyH = tf.grad((hh: tf.Tensor) => {
      const r = tokenLogprobs(hh as tf.Tensor3D, W, tg, { temperature: 0.7, weightGrad: false });
      return tf.add(tf.sum(tf.mul(r.logprobs, c)), tf.sum(tf.mul(r.entropy, tf.sub(2, c)))) as tf.Scalar;
    })(h);
    expect(relError(onlyH.dataSync(), slow[0].dataSync())).toBeLessThan(1e-5);
    tf.dispose([h, W, tg, c, ...fast, ...slow, onlyH]);
  });

  it('tied embeddings get gradient from both the input gather and the LM head (vs finite differences)', () => {
    const ids = tf.tensor2d([[3, 4, 5, 3]], undefined, 'int32');
    const tg = tf.tensor2d([[4, 5, 3, 4]], undefined, 'int32');
    const E = model.param('model.embed_tokens.weight');
    const f = () => tf.sum(model.tokenLogprobs(model.hidden({ ids }), tg).logprobs) as tf.Scalar;
    const { grads } = tf.variableGrads(f, [E]);
    const g = grads[E.name].arraySync() as number[][];
    const orig = E.arraySync() as number[][];
    const eps = 1e-2;
    for (const [r, c] of [
      [3, 0],
      [4, 7],
      [5, 31],
    ]) {
      const at = (d: number) => {
        const w = orig.map((row) => row.slice());
        w[r][c] += d;
        E.assign(tf.tensor2d(w));
        return tf.tidy(() => f().dataSync()[0]);
      };
      const fd = (at(eps) - at(-eps)) / (2 * eps);
      E.assign(tf.tensor2d(orig));
      expect(Math.abs(fd - g[r][c])).toBeLessThan(2e-2 * Math.max(1, Math.abs(fd)));
    }
    tf.dispose([ids, tg, ...Object.values(grads)]);
  });

  it('no tensor leak: 100 forward/backward steps leave as many tensors as 1', () => {
    const ids = tf.tensor2d(
      [
        [1, 2, 3, 4, 5, 6],
        [0, 0, 7, 8, 9, 10],
      ],
      undefined,
      'int32',
    );
    const mask = tf.tensor2d(
      [
        [1, 1, 1, 1, 1, 1],
        [0, 0, 1, 1, 1, 1],
      ],
      undefined,
      'int32',
    );
    const tg = tf.tensor2d(
      [
        [2, 3, 4, 5, 6, 0],
        [0, 7, 8, 9, 10, 0],
      ],
      undefined,
      'int32',
    );
    const step = () => {
      const { value, grads } = tf.variableGrads(() => {
        const h = model.hidden({ ids, attentionMask: mask });
        const r = model.tokenLogprobs(h, tg, { maxChunkElements: 2 * 97 * 3 });
        return tf.neg(tf.mean(tf.add(r.logprobs, r.entropy))) as tf.Scalar;
      }, model.variables());
      tf.dispose([value, ...Object.values(grads)]);
    };
    step();
    const after1 = tf.memory().numTensors;
    for (let i = 0; i < 99; i++) step();
    expect(tf.memory().numTensors).toBe(after1);
    tf.dispose([ids, mask, tg]);
  }, 300_000);

  it('rejects bad inputs and weights with errors naming the tensor and shapes', async () => {
    expect(() => model.hidden({})).toThrow(/exactly one of ids/);
    const e = tf.zeros([1, 2, 31]) as tf.Tensor3D;
    expect(() => model.hidden({ embeds: e })).toThrow(/embeds must be \[B, T, 32\], got \[1,2,31\]/);
    const ids = tf.zeros([2, 3], 'int32') as tf.Tensor2D;
    expect(() => model.hidden({ ids, attentionMask: tf.ones([2, 4]) as tf.Tensor2D })).toThrow(
      /attentionMask must be \[2, 3\] like the input, got \[2,4\]/,
    );
    const long = tf.zeros([1, 4097], 'int32') as tf.Tensor2D;
    expect(() => model.hidden({ ids: long })).toThrow(/4097 tokens exceeds max_position_embeddings 4096/);
    tf.dispose([ids, long]);
    e.dispose();
    const good = await model.toHost();
    const bad = (name: string, t: { shape: number[]; data: Float32Array } | undefined) => () =>
      Qwen3Model.fromWeights(config, (n) => (n === name ? t : good.get(n)));
    expect(bad('model.layers.1.mlp.up_proj.weight', { shape: [32, 48], data: new Float32Array(32 * 48) })).toThrow(
      /tensor model\.layers\.1\.mlp\.up_proj\.weight: wrong shape: expected \[48,32\], found \[32,48\]/,
    );
    try {
      bad('model.norm.weight', undefined)();
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(PolicyError);
      expect((err as PolicyError).code).toBe('missing_tensor');
      expect((err as PolicyError).message).toMatch(/model\.norm\.weight: missing tensor \(expected shape \[32\]\)/);
    }
  });
});

describe.each(TEST_BACKENDS)('activation checkpointing on %s', (backend) => {
  it('gives the same loss and gradients (input embeddings and every parameter), without leaks', async () => {
    await useBackend(backend);
    const model = Qwen3Model.random(config, 5, 0.2);
    const ids = tf.tensor2d(
      [
        [1, 2, 3, 4, 5, 6],
        [0, 0, 7, 8, 9, 10],
      ],
      undefined,
      'int32',
    );
    const mask = tf.tensor2d(
      [
        [1, 1, 1, 1, 1, 1],
        [0, 0, 1, 1, 1, 1],
      ],
      undefined,
      'int32',
    );
    const tg = tf.tensor2d(
      [
        [2, 3, 4, 5, 6, 0],
        [0, 7, 8, 9, 10, 0],
      ],
      undefined,
      'int32',
    );
    const run = (checkpoint: boolean) => {
      const embeds = model.embed(ids);
      const vars = model.variables();
      const { value, grads } = tf.variableGrads(() => {
        const h = model.hidden({ embeds: model.embed(ids), attentionMask: mask, checkpoint });
        return tf.neg(tf.mean(model.tokenLogprobs(h, tg).logprobs)) as tf.Scalar;
      }, vars);
      const gE = tf.grad(
        (e: tf.Tensor) =>
          tf.sum(
            model.tokenLogprobs(model.hidden({ embeds: e as tf.Tensor3D, attentionMask: mask, checkpoint }), tg).logprobs,
          ) as tf.Scalar,
      )(embeds);
      const out = { loss: value.dataSync()[0], grads: vars.map((v) => grads[v.name].dataSync()), gE: gE.dataSync() };
      tf.dispose([embeds, value, gE, ...Object.values(grads)]);
      return out;
    };
    const plain = run(false);
    const ck = run(true);
    const before = tf.memory().numTensors;
    run(true);
    expect(tf.memory().numTensors).toBe(before);
    expect(Math.abs(ck.loss - plain.loss)).toBeLessThan(1e-6);
    expect(relError(ck.gE, plain.gE)).toBeLessThan(1e-5);
    plain.grads.forEach((g, k) => expect(relError(ck.grads[k], g), model.variables()[k].name).toBeLessThan(1e-5));
    tf.dispose([ids, mask, tg]);
    model.dispose();
  }, 300_000);
});

// Two left-padded prompts (3 and 5 real tokens) of width 5, then 4 completion columns, the
// second row right-padded by one.
const ids = [
  [0, 0, 11, 12, 13, 20, 21, 22, 23],
  [31, 32, 33, 34, 35, 40, 41, 42, 0],
];
const mask = [
  [0, 0, 1, 1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 1, 1, 1, 0],
];
const S = 9;
const Q = 4; // the prefix: columns 0 .. 3
const D = config.hidden_size;

describe.each(TEST_BACKENDS)('hidden({ past }) after prefix() on %s', (backend) => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend(backend);
    model = Qwen3Model.random(config, 5, 0.2);
  });
  afterAll(() => model.dispose());

  it('gives the hidden states of the whole row at the later columns, and the same input gradient there', () => {
    const run = () => {
      const weights = tf.randomUniform([2, S - Q, D], -1, 1, 'float32', 7);
      const { full, split, gFull, gSplit } = tf.tidy(() => {
        const idsT = tf.tensor2d(ids, [2, S], 'int32');
        const maskT = tf.tensor2d(mask, [2, S]);
        const e = model.embed(idsT);
        // a loss of the later columns only: its gradient at the prefix columns is not needed
        const lossFull = (x: tf.Tensor) =>
          tf.sum(
            tf.mul(
              tf.slice(model.hidden({ embeds: x as tf.Tensor3D, attentionMask: maskT, weightGrad: false }), [0, Q, 0], [2, S - Q, D]),
              weights,
            ),
          );
        const gF = tf.grad(lossFull)(e);
        const past = model.prefix(tf.slice(idsT, [0, 0], [2, Q]) as tf.Tensor2D, tf.slice(maskT, [0, 0], [2, Q]) as tf.Tensor2D);
        const suffixMask = tf.slice(maskT, [0, Q], [2, S - Q]) as tf.Tensor2D;
        const es = tf.slice(e, [0, Q, 0], [2, S - Q, D]);
        const lossSplit = (x: tf.Tensor) =>
          tf.sum(tf.mul(model.hidden({ embeds: x as tf.Tensor3D, attentionMask: suffixMask, past, weightGrad: false }), weights));
        const gS = tf.grad(lossSplit)(es);
        const out = {
          full: tf.slice(model.hidden({ ids: idsT, attentionMask: maskT }), [0, Q, 0], [2, S - Q, D]).dataSync(),
          split: model.hidden({ embeds: es as tf.Tensor3D, attentionMask: suffixMask, past }).dataSync(),
          gFull: tf.slice(gF, [0, Q, 0], [2, S - Q, D]).dataSync(),
          gSplit: gS.dataSync(),
        };
        past.dispose();
        return out;
      });
      weights.dispose();
      // real positions only (the padded last column of row 1 is junk either way)
      const real = (i: number) => mask[Math.floor(i / ((S - Q) * D))]![Q + (Math.floor(i / D) % (S - Q))] === 1;
      expect(relError(split, full, real)).toBeLessThan(1e-5);
      expect(relError(gSplit, gFull, real)).toBeLessThan(1e-5);
    };
    run(); // warm-up: the model's cached weight transposes
    const before = tf.memory().numTensors;
    run();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('refuses a past of another batch size, and counts the prefix against max_position_embeddings', () => {
    tf.tidy(() => {
      const past = model.prefix(tf.tensor2d([[1, 2]], [1, 2], 'int32'));
      expect(() => model.hidden({ ids: tf.tensor2d([[3], [4]], [2, 1], 'int32'), past })).toThrow(
        new PolicyError('invalid_input', 'past holds 1 rows, the input 2'),
      );
      const long = tf.tensor2d([Array.from({ length: config.max_position_embeddings }, () => 3)], undefined, 'int32');
      expect(() => model.hidden({ ids: long, past })).toThrow(/sequence of \d+ tokens exceeds max_position_embeddings/);
      past.dispose();
    });
  });
});
