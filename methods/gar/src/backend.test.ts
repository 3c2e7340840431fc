import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchFromRows, packRollouts, type RolloutBatch } from '@rlvr/core';
import { type Qwen3Model, batchLogprobs, selectBackend, tokenLogprobs } from '@rlvr/policy';
import { GarBackendConfigSchema, garCosines, garSequences, materialize } from './index.js';
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

  it('factorised and materialised cosines agree; a rollout equal to its reference has cos 1; nothing leaks', () => {
    const b = batch();
    garCosines(model, b, config()); // warm-up: the policy caches transposed weights (its ops' transpose cache)
    const before = tf.memory().numTensors;
    const f = garCosines(model, b, config({ tokenBudget: 16 })); // micro-batches of one or two rows
    const m = garCosines(model, b, config({ materialize: true, temperature: 0.8 }));
    const m1 = garCosines(model, b, config({ materialize: true, temperature: 0.8, tokenBudget: 10_000 }));
    expect(tf.memory().numTensors).toBe(before);
    expect(f.scores[1]).toBeCloseTo(1, 6);
    expect(Array.from(f.hasScores)).toEqual([1, 1, 1, 0, 1, 1]);
    expect(f.missing).toBe(1);
    expect(f.scores[3]).toBe(0);
    const t1 = garCosines(model, b, config({ temperature: 0.8 })); // both groups in one micro-batch
    const each = garCosines(model, b, config({ temperature: 0.8, maxReferenceElements: 1 })); // one group at a time
    for (let i = 0; i < 6; i++) expect(each.scores[i]).toBeCloseTo(t1.scores[i]!, 6);
    for (let i = 0; i < 6; i++) {
      expect(Math.abs(t1.scores[i]! - m.scores[i]!), `rollout ${i}`).toBeLessThan(1e-5);
      expect(m1.scores[i]).toBeCloseTo(m.scores[i]!, 6); // micro-batching does not change a rollout's value
      expect(Math.abs(f.scores[i]!)).toBeLessThanOrEqual(1);
    }
    expect(new Set(Array.from(f.scores)).size).toBeGreaterThan(3); // not a constant
  });

  it("g from tf.grad of the policy's own log-probs w.r.t. W_out, and a finite difference of the model's log-likelihood", () => {
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
    const gv = g.dataSync();
    const av = auto.dataSync();
    let worst = 0;
    let scale = 0;
    for (let k = 0; k < gv.length; k++) {
      worst = Math.max(worst, Math.abs(gv[k]! - av[k]!));
      scale = Math.max(scale, Math.abs(av[k]!));
    }
    expect(worst / scale).toBeLessThan(1e-5);
    // log pi(y | x) in float64 from the model's hidden states, with W_out + eps * dir (the LM-head use only)
    const h = seq.h.dataSync();
    const ids = seq.ids.dataSync();
    const w0 = Float64Array.from(W.dataSync());
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

  it("the same pass gives the old log-probs and entropies: the trainer's own (batchLogprobs) within 1e-5", () => {
    const b = batch();
    const r = garCosines(model, b, config({ temperature: 0.8 }));
    const own = batchLogprobs(model, b, { tokenBudget: 8192, temperature: 0.8 });
    expect(r.logprobs.length).toBe(own.logprobs.length);
    own.logprobs.forEach((lp, t) => {
      expect(Math.abs(r.logprobs[t]! - lp), `token ${t}`).toBeLessThan(1e-5);
      expect(Math.abs(r.entropy[t]! - own.entropy[t]!), `token ${t}`).toBeLessThan(1e-5);
    });
    expect(Math.min(...r.logprobs)).toBeLessThan(-1); // a random model: not all near 0
  });

  it('a batch without references, or a rollout whose problem has none, is a typed error naming the rollout', () => {
    const none = batch([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(() => garCosines(model, none, config())).toThrow(
      /^rollout 0, field referenceTokens: saliency backend gar needs each rollout's reference solution/,
    );
    const partial = batch([REF, REF, REF, REF, [4, 4, 8], undefined]);
    expect(() => garCosines(model, partial, config())).toThrow(
      "rollout 5, field referenceTokens: saliency backend gar needs a reference solution, but this rollout's problem has none",
    );
    const long = batch([REF, REF, REF, REF, Array.from({ length: 300 }, () => 4), Array.from({ length: 300 }, () => 4)]);
    expect(() => garCosines(model, long, config())).toThrow(
      "rollout 4, field referenceTokens: the reference solution is 300 tokens; with the prompt's 2 it exceeds the policy's context of 256 tokens",
    );
    const differ = batch([REF, REF, [1], REF, [4], [4]]);
    expect(() => garCosines(model, differ, config())).toThrow(
      'rollout 2, field referenceTokens: the rollouts of group 0 carry different reference solutions',
    );
  });
});
