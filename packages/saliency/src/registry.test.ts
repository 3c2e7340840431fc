import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreError, SIGNAL_NAMES, Signals, batchFromRows } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import type { SaliencyBackend } from './backend.js';
import { gradXEmbBackend } from './grad-x-emb.js';
import { computeSaliency, saliencyBackends } from './registry.js';
import { SaliencyError } from './errors.js';
import { precomputed } from './precomputed.js';
import { fixtureBatch, tinyModel, useBackend } from './test-utils/fixtures.js';

const batch = fixtureBatch();
const T = batch.completionTokens.length;

describe('the backend registry', () => {
  it('MODEL_BACKENDS comes from the registry and holds the built-in model backends', () => {
    expect(MODEL_BACKENDS).toEqual(expect.arrayContaining(['grad-x-emb', 'noisy-kl', 'perturbation']));
  });

  it('holds the four backends by name; a taken name with another implementation and an unknown name throw', async () => {
    expect(saliencyBackends.names()).toEqual(['grad-x-emb', 'noisy-kl', 'perturbation', 'precomputed']);
    expect(saliencyBackends.register(gradXEmbBackend)).toBe(gradXEmbBackend); // same object: harmless
    const other: SaliencyBackend = { ...gradXEmbBackend };
    expect(() => saliencyBackends.register(other)).toThrow(CoreError);
    await expect(computeSaliency('grail-magic', null, batch)).rejects.toThrow(SaliencyError);
    await expect(computeSaliency('grail-magic', null, batch)).rejects.toThrow('known: grad-x-emb, noisy-kl, perturbation, precomputed');
  });

  it('model backends refuse to run without a model; bad options name the field and allowed values', async () => {
    await expect(computeSaliency('noisy-kl', null, batch)).rejects.toThrow('saliency backend noisy-kl runs the policy: pass a model');
    try {
      await computeSaliency('grad-x-emb', {} as Qwen3Model, batch, { answerSpan: 'last-box' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SaliencyError);
      expect((e as SaliencyError).code).toBe('invalid_config');
      expect((e as SaliencyError).message).toContain('answerSpan: must be one of "boxed", "content" (got "last-box")');
    }
  });
});

describe('precomputed', () => {
  it('lays the scores out like the batch and stores them as the named signal', async () => {
    const scores = [Array.from({ length: 10 }, (_, t) => t / 10), new Float32Array(8).fill(2), null, [0, 0, 0, 1, 1, 1]];
    const { result, signals } = await computeSaliency('precomputed', null, batch, { scores, signal: SIGNAL_NAMES.noisyKl });
    expect(Array.from(result.hasScores)).toEqual([1, 1, 0, 1]);
    expect(result.missing).toBe(1);
    const s = signals.get(SIGNAL_NAMES.noisyKl);
    expect(s.length).toBe(T);
    expect(s[3]).toBeCloseTo(0.3, 6);
    expect(s[10]).toBe(2);
    expect(Array.from(s.subarray(batch.completionOffsets[3]!))).toEqual([0, 0, 0, 1, 1, 1]);
  });

  it('rejects scores of the wrong length, non-finite or negative, naming the rollout and token', () => {
    const ok = [new Array(10).fill(1), new Array(8).fill(1), null, new Array(6).fill(1)];
    expect(() => precomputed(batch, { scores: ok.slice(0, 3) })).toThrow('expected scores for 4 rollouts, found 3');
    expect(() => precomputed(batch, { scores: [ok[0]!, new Array(7).fill(1), null, ok[3]!] })).toThrow(
      'rollout 1, field scores: has 7 scores but the completion has 8 tokens',
    );
    const nan = ok.map((s) => (s ? [...s] : s));
    nan[3]![4] = NaN;
    expect(() => precomputed(batch, { scores: nan })).toThrow('rollout 3, field scores.4: scores must be finite and >= 0, found NaN');
    nan[3]![4] = -1;
    expect(() => precomputed(batch, { scores: nan })).toThrow(SaliencyError);
  });
});

/** Every registered backend that runs the policy: the contract below holds for each, a new one included. */
const MODEL_BACKENDS = saliencyBackends.names().filter((n) => saliencyBackends.get(n).needsModel);

describe('every model backend (contract, cpu)', () => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend('cpu');
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it.each(MODEL_BACKENDS)(
    '%s: [totalTokens] finite scores >= 0, zero and flagged without an answer, into Signals, no leak',
    async (name) => {
      await computeSaliency(name, model, batch);
      const before = tf.memory().numTensors;
      const signals = new Signals(T);
      const { result } = await computeSaliency(name, model, batch, {}, signals);
      expect(tf.memory().numTensors).toBe(before);
      expect(signals.get(saliencyBackends.get(name).signal)).toBe(result.scores);
      expect(result.scores.length).toBe(T);
      expect(result.scores.every((s) => Number.isFinite(s) && s >= 0)).toBe(true);
      expect(Array.from(result.hasScores)).toEqual([1, 1, 0, 1]);
      expect(result.scores.subarray(batch.completionOffsets[2]!, batch.completionOffsets[3]!).every((s) => s === 0)).toBe(true);
      expect(result.scores.subarray(0, 8).some((s) => s > 0)).toBe(true);
      // a fused backend's log-probs and entropies: one per token, log-probs <= 0, entropies >= 0
      if (saliencyBackends.get(name).logprobsTemperature) {
        expect(result.logprobs!.length).toBe(T);
        expect(result.entropy!.length).toBe(T);
        expect(result.logprobs!.every((v) => Number.isFinite(v) && v <= 0)).toBe(true);
        expect(result.entropy!.every((v) => Number.isFinite(v) && v >= -1e-6)).toBe(true);
      }
    },
  );

  it.each(MODEL_BACKENDS)('%s: a batch with no answer at all, or an empty completion, gives zeros and no error', async (name) => {
    const b = batchFromRows([
      { group: 0, reward: 0, prompt: [5, 6], completion: [7, 8, 9] },
      { group: 0, reward: 1, prompt: [5], completion: [] },
    ]);
    const { result } = await computeSaliency(name, model, b);
    expect(Array.from(result.scores)).toEqual([0, 0, 0]);
    expect(result.missing).toBe(2);
  });

  it('an empty prompt is refused naming the rollout', async () => {
    const b = batchFromRows([
      { group: 0, reward: 0, prompt: [], completion: [7, 8, 9], spans: { open: [0, 1], content: [1, 2], close: [2, 3] } },
    ]);
    for (const name of MODEL_BACKENDS) {
      await expect(computeSaliency(name, model, b)).rejects.toThrow('rollout 0, field prompt: prompt is empty');
    }
  });
});
