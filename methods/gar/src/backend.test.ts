import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchFromRows, packRollouts, type RolloutBatch } from '@rlvr/core';
import { type Qwen3Model, batchLogprobs, selectBackend, tokenLogprobs } from '@rlvr/policy';
import {
  GarBackendConfigSchema,
  garCosines,
  garSequences,
  garWorkerBackend,
  gradTimesHidden,
  materialize,
  vectorCosines,
} from './index.js';
import { tf } from './tf.js';
import { tinyModel } from './test-utils/tiny-model.js';

const config = (over: Record<string, unknown> = {}) => GarBackendConfigSchema.parse(over);
let model: Qwen3Model;

const REF = [5, 9, 9, 2, 17];
/** Two groups: group 0 has a rollout equal to its reference (rollout 1) and an empty one (rollout 3). */
function batch(refs: (number[] | undefined)[] = [REF, REF, REF, REF, [4, 4, 8], [4, 4, 8]]): RolloutBatch {
  const completions = [[5, 9, 1], REF, [20, 3, 3, 3, 11, 6, 2], [], [4, 1], [8, 8, 8, 8]];
  return batchFromRows(
    completions.map((completion, i) => ({
      group: i < 4 ? 0 : 1,
      prompt: i < 4 ? [1, 2, 3] : [7, 3],
      completion,
      reward: i % 2,
      ...(refs[i] === undefined ? {} : { reference: refs[i] }),
    })),
  );
}

// Both backends rlvr runs on here: wasm (rlvr train's default) and cpu.
describe.each(['cpu', 'wasm'] as const)('gar backend on a tiny random model (%s)', (backend) => {
  beforeAll(async () => {
    await selectBackend({ backend });
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it('head-weight: factorised and materialised cosines agree; a rollout equal to its reference has cos 1; nothing leaks', async () => {
    const b = batch();
    const hw = (over: Record<string, unknown> = {}) => config({ vector: 'head-weight', ...over });
    await garCosines(model, b, hw()); // warm-up: the policy caches transposed weights (its ops' transpose cache)
    const before = tf.memory().numTensors;
    const f = await garCosines(model, b, hw({ tokenBudget: 16 })); // micro-batches of one or two rows
    const m = await garCosines(model, b, hw({ materialize: true, temperature: 0.8 }));
    const m1 = await garCosines(model, b, hw({ materialize: true, temperature: 0.8, tokenBudget: 10_000 }));
    expect(tf.memory().numTensors).toBe(before);
    expect(f.scores[1]).toBeCloseTo(1, 6);
    expect(Array.from(f.hasScores)).toEqual([1, 1, 1, 0, 1, 1]);
    expect(f.missing).toBe(1);
    expect(f.scores[3]).toBe(0);
    const t1 = await garCosines(model, b, hw({ temperature: 0.8 })); // both groups in one micro-batch
    const each = await garCosines(model, b, hw({ temperature: 0.8, maxReferenceElements: 1 })); // one group at a time
    for (let i = 0; i < 6; i++) expect(each.scores[i]).toBeCloseTo(t1.scores[i]!, 6);
    for (let i = 0; i < 6; i++) {
      expect(Math.abs(t1.scores[i]! - m.scores[i]!), `rollout ${i}`).toBeLessThan(1e-5);
      expect(m1.scores[i]).toBeCloseTo(m.scores[i]!, 6); // micro-batching does not change a rollout's value
      expect(Math.abs(f.scores[i]!)).toBeLessThanOrEqual(1);
    }
    expect(new Set(Array.from(f.scores)).size).toBeGreaterThan(3); // not a constant
  });

  it('grad-x-hidden (the default): tf.grad of the mean cross-entropy w.r.t. the hidden states, times them; micro-batching changes nothing; nothing leaks', async () => {
    const b = batch();
    await garCosines(model, b, config());
    const before = tf.memory().numTensors;
    const one = await garCosines(model, b, config({ tokenBudget: 16 }));
    const all = await garCosines(model, b, config({ tokenBudget: 10_000, maxReferenceElements: 1 }));
    expect(tf.memory().numTensors).toBe(before);
    expect(one.scores[1]).toBeCloseTo(1, 6); // equal to its reference
    expect(Array.from(one.hasScores)).toEqual([1, 1, 1, 0, 1, 1]);
    for (let i = 0; i < 6; i++) expect(all.scores[i]).toBeCloseTo(one.scores[i]!, 6);
    // rollout 2's vector by autodiff: d/dh of (1/L) sum_t -log softmax(W h_t / T)[y_t], times h, summed over t
    const tau = 0.8;
    const seq = garSequences(model, packRollouts(b, [2, 0], 0), tau);
    const W = model.lmHeadWeight();
    const v = gradTimesHidden(seq, W);
    const row0 = tf.tidy(() => tf.slice(seq.h, [0, 0, 0], [1, 7, model.dims.D]) as tf.Tensor3D);
    const ids0 = tf.tidy(() => tf.slice(seq.ids, [0, 0], [1, 7]) as tf.Tensor2D);
    const auto = tf.tidy(() => {
      const g = tf.grad((h: tf.Tensor) => tf.neg(tf.mean(tokenLogprobs(h as tf.Tensor3D, W, ids0, { temperature: tau }).logprobs)))(row0);
      return tf.sum(tf.mul(g, row0), [0, 1]);
    });
    const got = vectorCosines((await v.data()).subarray(0, model.dims.D), await auto.data());
    expect(got[0]).toBeCloseTo(1, 6); // the same direction (the cosine sees neither 1/T nor 1/L)
    tf.dispose([v, row0, ids0, auto, seq.h, seq.probs, seq.ids, seq.mask, seq.logprobs, seq.entropy]);
  });

  it('teacher anchors: residual, max and expert from the per-anchor cosines; bad options and anchors are typed errors', async () => {
    const b = batch();
    const teachers = (i: number) => (b.groupIndex[i] === 0 ? [Int32Array.from([20, 3, 3, 3, 11, 6, 2]), Int32Array.from([8, 1])] : []);
    const expert = await garCosines(model, b, config());
    const res = await garCosines(model, b, config(), teachers);
    const max = await garCosines(model, b, config({ anchors: 'max', teacherWeight: 1 }), teachers);
    expect(res.scores[2]).toBeCloseTo(expert.scores[2]! + 0.5 * (1 - expert.scores[2]!), 5); // rollout 2 is teacher 0
    expect(max.scores[2]).toBeCloseTo(1, 5);
    for (const i of [4, 5]) expect(res.scores[i]).toBe(expert.scores[i]); // group 1 has no teacher
    expect(() => garWorkerBackend.parseConfig({ materialize: true })).toThrow(
      "invalid saliency backend gar configuration: materialize: applies to vector 'head-weight' only",
    );
    await expect(garCosines(model, b, config(), () => [new Int32Array(0)])).rejects.toThrow(
      'rollout 0, field teachers: teacher anchor 0 is empty',
    );
  });

  it("head-weight: g from tf.grad of the policy's own log-probs w.r.t. W_out, and a finite difference of the model's log-likelihood", async () => {
    const b = batch();
    const tau = 0.8;
    const packed = packRollouts(b, [2], 0);
    const seq = garSequences(model, packed, tau);
    const W = model.lmHeadWeight();
    const [V, D] = W.shape;
    const g = tf.tidy(() => tf.div(materialize(seq), tau)); // [1, V, D]: d log pi / d W_out
    const auto = tf.tidy(() =>
      tf.grad((w: tf.Tensor) => tf.sum(tokenLogprobs(seq.h, w as tf.Tensor2D, seq.ids, { temperature: tau }).logprobs))(tf.clone(W)),
    );
    const gv = await g.data();
    const av = await auto.data();
    let worst = 0;
    let scale = 0;
    for (let k = 0; k < gv.length; k++) {
      worst = Math.max(worst, Math.abs(gv[k]! - av[k]!));
      scale = Math.max(scale, Math.abs(av[k]!));
    }
    expect(worst / scale).toBeLessThan(1e-5);
    // log pi(y | x) in float64 from the model's hidden states, with W_out + eps * dir (the LM-head use only)
    const h = await seq.h.data();
    const ids = await seq.ids.data();
    const w0 = Float64Array.from(await W.data());
    const dir = Float64Array.from({ length: V * D }, (_, k) => Math.sin(1.7 * k + 0.3));
    const C = ids.length;
    const logLik = (eps: number) => {
      let s = 0;
      for (let t = 0; t < C; t++) {
        const z = Array.from({ length: V }, (_, v) => {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += (w0[v * D + d]! + eps * dir[v * D + d]!) * h[t * D + d]!;
          return dot / tau;
        });
        const mx = Math.max(...z);
        s += z[ids[t]!]! - mx - Math.log(z.reduce((a, x) => a + Math.exp(x - mx), 0));
      }
      return s;
    };
    const eps = 1e-4;
    const fd = (logLik(eps) - logLik(-eps)) / (2 * eps);
    let analytic = 0;
    for (let k = 0; k < V * D; k++) analytic += gv[k]! * dir[k]!;
    expect(Math.abs(fd - analytic) / Math.abs(fd)).toBeLessThan(1e-4);
    tf.dispose([g, auto, seq.h, seq.probs, seq.ids, seq.mask, seq.logprobs, seq.entropy]);
  });

  it("the same pass gives the old log-probs and entropies: the trainer's own (batchLogprobs) within 1e-5", async () => {
    const b = batch();
    const r = await garCosines(model, b, config({ temperature: 0.8 }));
    const own = await batchLogprobs(model, b, { tokenBudget: 8192, temperature: 0.8 });
    expect(r.logprobs.length).toBe(own.logprobs.length);
    own.logprobs.forEach((lp, t) => {
      expect(Math.abs(r.logprobs[t]! - lp), `token ${t}`).toBeLessThan(1e-5);
      expect(Math.abs(r.entropy[t]! - own.entropy[t]!), `token ${t}`).toBeLessThan(1e-5);
    });
    expect(Math.min(...r.logprobs)).toBeLessThan(-1); // a random model: not all near 0
  });

  it('a batch without references, or a rollout whose problem has none, is a typed error naming the rollout', async () => {
    const none = batch([undefined, undefined, undefined, undefined, undefined, undefined]);
    await expect(garCosines(model, none, config())).rejects.toThrow(
      /^rollout 0, field referenceTokens: saliency backend gar needs each rollout's reference solution/,
    );
    const partial = batch([REF, REF, REF, REF, [4, 4, 8], undefined]);
    await expect(garCosines(model, partial, config())).rejects.toThrow(
      "rollout 5, field referenceTokens: saliency backend gar needs a reference solution, but this rollout's problem has none",
    );
    const long = batch([REF, REF, REF, REF, Array.from({ length: 300 }, () => 4), Array.from({ length: 300 }, () => 4)]);
    await expect(garCosines(model, long, config())).rejects.toThrow(
      "rollout 4, field referenceTokens: the reference solution is 300 tokens; with the prompt's 2 it exceeds the policy's context of 256 tokens",
    );
    const differ = batch([REF, REF, [1], REF, [4], [4]]);
    await expect(garCosines(model, differ, config())).rejects.toThrow(
      'rollout 2, field referenceTokens: the rollouts of group 0 carry different reference solutions',
    );
  });
});
