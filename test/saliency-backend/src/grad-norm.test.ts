import { beforeAll, describe, expect, it } from 'vitest';
import { batchFromRows } from '@rlvr/core';
import { Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import {
  GradXEmbConfigSchema,
  computeSaliency,
  computeSignals,
  gradXEmbRows,
  packRows,
  parseSignalConfig,
  saliencyBackends,
  saliencyMethods,
} from '@rlvr/saliency';
import { GRAD_NORM_SIGNAL, gradNormBackend, registerGradNorm } from './index.js';

let model: Qwen3Model;
const batch = batchFromRows([
  { group: 0, reward: 1, prompt: [3, 4, 5], completion: [6, 7, 8, 9, 10, 11], spans: { open: [2, 3], content: [3, 4], close: [4, 5] } },
  { group: 0, reward: 0, prompt: [3, 4], completion: [12, 13, 14] }, // no answer: no scores
  { group: 0, reward: 0, prompt: [7], completion: [15, 16, 17, 18], spans: { open: [1, 2], content: [2, 3], close: [3, 4] } },
]);

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
  model = Qwen3Model.random(
    parseModelConfig({
      vocab_size: 50,
      hidden_size: 16,
      intermediate_size: 32,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 8,
    }),
    1,
    0.3,
  );
  registerGradNorm();
  registerGradNorm(); // twice is harmless
});

describe('a backend from outside the packages', () => {
  it('is registered by name, offered by rlvr-saliency --method, and keeps the backend contract', async () => {
    expect(saliencyBackends.get('grad-norm')).toBe(gradNormBackend);
    expect(saliencyMethods()).toContain('grad-norm');
    const { result, signals } = await computeSaliency('grad-norm', model, batch, { order: 2 });
    expect(signals.get(GRAD_NORM_SIGNAL)).toBe(result.scores);
    expect(Array.from(result.hasScores)).toEqual([1, 0, 1]);
    expect(result.missing).toBe(1);
    expect(result.scores.every((s) => Number.isFinite(s) && s >= 0)).toBe(true);
    expect(result.scores.subarray(6, 9).every((s) => s === 0)).toBe(true);
    await expect(computeSaliency('grad-norm', null, batch)).rejects.toThrow('saliency backend grad-norm runs the policy: pass a model');
  });

  it('its scores are the norms of the answer-loss gradient that grad-x-emb differentiates', async () => {
    const ours = (await computeSaliency('grad-norm', model, batch)).result.scores;
    const packed = packRows(batch, [0, 1, 2], 'boxed');
    const { gradient } = await gradXEmbRows(model, packed, GradXEmbConfigSchema.parse({}), { keepGradient: true });
    const { P, C, S } = packed;
    const D = 16;
    [0, 2].forEach((i, k) => {
      const r = k === 0 ? 0 : 2;
      const c0 = batch.completionOffsets[i]!;
      for (let j = 0; j < batch.completionOffsets[i + 1]! - c0; j++) {
        let sq = 0;
        for (let d = 0; d < D; d++) sq += gradient![(r * S + P - 1 + j) * D + d]! ** 2;
        expect(ours[c0 + j]).toBeCloseTo(Math.sqrt(sq), 5);
      }
    });
    expect(C).toBe(6);
  });

  it('the signal step resolves its signal to it and checks its options by its schema', async () => {
    const plan = parseSignalConfig({ 'grad-norm': { order: 1 } }, [GRAD_NORM_SIGNAL]);
    expect(plan.sources.map((s) => s.backend.name)).toEqual(['grad-norm']);
    expect(plan.logprobsFrom).toBeNull(); // not a fused pass: the trainer recomputes the old log-probs
    const { signals, oldLogprobs } = await computeSignals(model, batch, plan, { padId: 0, tokenBudget: 4096 });
    expect(oldLogprobs).toBeUndefined();
    expect(signals.get(GRAD_NORM_SIGNAL)).toEqual((await computeSaliency('grad-norm', model, batch, { order: 1 })).result.scores);
    expect(() => parseSignalConfig({ 'grad-norm': { ordr: 1 } }, [GRAD_NORM_SIGNAL])).toThrow(
      'field saliency.grad-norm: invalid saliency backend grad-norm configuration: unknown key: ordr',
    );
  });
});
