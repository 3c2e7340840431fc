import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { tf } from './tf.js';
import { selectBackend } from '@rlvr/policy';
import { AdamW, AdamWConfigSchema, clipGradNorm } from './adamw.js';
import { learningRate, LrScheduleSchema } from './schedule.js';

interface Case {
  config: { lr: number; beta1: number; beta2: number; eps: number; weightDecay: number };
  shapes: Record<string, number[]>;
  init: Record<string, number[]>;
  grads: Array<Record<string, number[]>>;
  params: Array<Record<string, number[]>>;
  exp_avg_sq_p: number[];
}
// Written by tools/fixtures/trainer/make_adamw_fixture.py from torch.optim.AdamW.
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/adamw.json', import.meta.url), 'utf8')) as Record<string, Case>;

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

describe('AdamW', () => {
  it.each(Object.keys(fixture))('follows torch.optim.AdamW step by step (%s)', async (name) => {
    const c = fixture[name]!;
    const { lr, ...rest } = c.config;
    const opt = new AdamW(AdamWConfigSchema.parse(rest));
    const params = new Map(Object.entries(c.init).map(([k, v]) => [k, tf.variable(tf.tensor(v, c.shapes[k]!))]));
    c.grads.forEach((g, step) => {
      const grads = new Map(Object.entries(g).map(([k, v]) => [k, tf.tensor(v, c.shapes[k]!)]));
      opt.apply(params, grads, lr);
      for (const [k, p] of params) {
        const got = p.dataSync();
        c.params[step]![k]!.forEach((want, i) => expect(got[i]).toBeCloseTo(want, 5));
      }
      grads.forEach((t) => t.dispose());
    });
    const state = await opt.exportState();
    expect(state.step).toBe(5);
    Array.from(state.tensors.get('p.exp_avg_sq')!.data).forEach((v, i) => expect(v).toBeCloseTo(c.exp_avg_sq_p[i]!, 6));
    // restoring the state into a fresh optimizer continues identically
    const copy = new AdamW(opt.config);
    copy.importState(params, state);
    const snapshot = new Map([...params].map(([k, p]) => [k, tf.variable(tf.clone(p))]));
    const g = new Map([...params].map(([k, p]) => [k, tf.onesLike(p)]));
    opt.apply(params, g, lr);
    copy.apply(snapshot, g, lr);
    for (const [k, p] of params) expect(Array.from(snapshot.get(k)!.dataSync())).toEqual(Array.from(p.dataSync()));
    opt.dispose();
    copy.dispose();
  });

  it('holds its moments and at most 5 parameter-sized temporaries per update; dispose frees them', async () => {
    // One large parameter, as Qwen3-0.6B's embedding is: the update's peak above what lives before
    // it (weight, gradient, moments) is what bounds the optimizer's memory. One tidy over the whole
    // update held 16 tensors of the parameter's size at once.
    const n = 1 << 18;
    const bytes = 4 * n;
    const opt = new AdamW(AdamWConfigSchema.parse({ weightDecay: 0.01 }));
    const params = new Map([['w', tf.variable(tf.randomUniform([n], -1, 1, 'float32', 1))]]);
    const grads = new Map([['w', tf.randomUniform([n], -1, 1, 'float32', 2)]]);
    const start = tf.memory().numBytes;
    opt.apply(params, grads, 1e-3); // creates the moments: two tensors of the parameter's size, nothing beside them
    expect(tf.memory().numBytes - start).toBe(2 * bytes);
    tf.env().set('CHECK_COMPUTATION_FOR_ERRORS', false); // tf.profile would read back every output
    const before = tf.memory().numBytes;
    const info = await tf.profile(() => opt.apply(params, grads, 1e-3));
    tf.env().set('CHECK_COMPUTATION_FOR_ERRORS', true);
    expect(tf.memory().numBytes).toBe(before); // nothing leaks
    expect(info.peakBytes - before).toBeLessThanOrEqual(5 * bytes);
    expect(info.peakBytes - before).toBeGreaterThanOrEqual(3 * bytes); // the profile saw the update
    const restored = new AdamW(opt.config);
    restored.importState(params, await opt.exportState());
    expect(tf.memory().numBytes - before).toBe(2 * bytes);
    opt.dispose();
    restored.dispose();
    expect(tf.memory().numBytes).toBe(start); // dispose frees the moments whole
    tf.dispose([...params.values(), ...grads.values()]);
  });

  it('refuses optimizer state of the wrong shape, naming it', () => {
    const opt = new AdamW(AdamWConfigSchema.parse({}));
    const params = new Map([['w', tf.variable(tf.zeros([2, 2]))]]);
    const bad = {
      step: 1,
      tensors: new Map([
        ['w.exp_avg', { shape: [4], data: new Float32Array(4) }],
        ['w.exp_avg_sq', { shape: [4], data: new Float32Array(4) }],
      ]),
    };
    expect(() => opt.importState(params, bad)).toThrow('optimizer state w.exp_avg: expected shape [2, 2], found [4]');
  });
});

describe('clipGradNorm', () => {
  it('returns the global norm and scales down only above the maximum', async () => {
    const grads = new Map([
      ['a', tf.tensor1d([3, 0])],
      ['b', tf.tensor1d([4])],
    ]);
    const before = tf.memory().numTensors;
    const { norm, grads: clipped } = await clipGradNorm(grads, 1);
    expect(norm).toBeCloseTo(5, 6);
    expect(clipped.get('a')!.dataSync()[0]).toBeCloseTo(0.6, 5);
    expect(clipped.get('b')!.dataSync()[0]).toBeCloseTo(0.8, 5);
    expect(tf.memory().numTensors).toBe(before + 2); // only the two scaled gradients
    const same = await clipGradNorm(grads, 10);
    expect(same.grads.get('a')).toBe(grads.get('a'));
  });
});

describe('learningRate', () => {
  it('applies linear warmup, then the schedule', () => {
    const s = LrScheduleSchema.parse({ type: 'cosine', lr: 1, warmupSteps: 4, totalSteps: 14, minLrRatio: 0.1 });
    expect([0, 1, 2, 3].map((k) => learningRate(s, k))).toEqual([0.25, 0.5, 0.75, 1]);
    expect(learningRate(s, 4)).toBeCloseTo(1, 12);
    expect(learningRate(s, 9)).toBeCloseTo(0.1 + 0.9 * 0.5, 12); // halfway: cos(pi/2) = 0
    expect(learningRate(s, 14)).toBeCloseTo(0.1, 12);
    expect(learningRate(s, 100)).toBeCloseTo(0.1, 12);
    const lin = LrScheduleSchema.parse({ type: 'linear', lr: 2, totalSteps: 10 });
    expect(learningRate(lin, 5)).toBeCloseTo(1, 12);
    const c = LrScheduleSchema.parse({ lr: 0.5, warmupSteps: 2 });
    expect([0, 1, 2, 50].map((k) => learningRate(c, k))).toEqual([0.25, 0.5, 0.5, 0.5]);
    expect(() => LrScheduleSchema.parse({ type: 'cosine' })).toThrow(/totalSteps is required/);
  });
});
