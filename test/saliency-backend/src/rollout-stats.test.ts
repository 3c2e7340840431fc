import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchFromRows } from '@rlvr/core';
import { PolicyWorkers, Qwen3Model, batchLogprobs, parseModelConfig, selectBackend } from '@rlvr/policy';
import { computeSignals, computeSignalsOnWorkers, parseSignalConfig, saliencyBackends } from '@rlvr/saliency';
import { ROLLOUT_STATS_SIGNAL, rolloutStatsBackend, rolloutStatsLocalBackend, runs } from './rollout-stats.js';

// The workers import the backend from dist/ (a worker cannot run TypeScript): build first (tsc -b).
const batch = batchFromRows([
  { group: 0, reward: 1, prompt: [3, 4, 5], completion: [6, 7, 8, 9] },
  { group: 0, reward: 0, prompt: [3, 4], completion: [12, 13, 14] },
  { group: 1, reward: 0, prompt: [7], completion: [15, 16] },
  { group: 1, reward: 1, prompt: [7, 8], completion: [20, 21, 22, 23, 24] },
]);
const pass = { padId: 0, tokenBudget: 4096 };
let model: Qwen3Model;
let workers: PolicyWorkers;

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
  saliencyBackends.register(rolloutStatsBackend);
  saliencyBackends.register(rolloutStatsLocalBackend);
  workers = await PolicyWorkers.start(model, { workers: 2 });
});
afterAll(async () => {
  await workers.close();
  model.dispose();
});

describe('a per-rollout signal backend from outside the packages', () => {
  it('gives a [B, 2] signal through the signal step, checked against the policy log-probs', async () => {
    const plan = parseSignalConfig({}, [ROLLOUT_STATS_SIGNAL]);
    const { signals } = await computeSignals(model, batch, plan, pass);
    const { values, width } = signals.getPerRollout(ROLLOUT_STATS_SIGNAL);
    expect(width).toBe(2);
    const { logprobs, entropy } = await batchLogprobs(model, batch, { ...pass, temperature: 1 });
    const o = batch.completionOffsets;
    for (let i = 0; i < batch.numRollouts; i++) {
      const n = o[i + 1]! - o[i]!;
      const mean = (a: Float32Array) => a.subarray(o[i]!, o[i + 1]!).reduce((s, v) => s + v, 0) / n;
      expect(values[2 * i]).toBeCloseTo(mean(logprobs), 5);
      expect(values[2 * i + 1]).toBeCloseTo(mean(entropy), 5);
    }
    expect(() => signals.get(ROLLOUT_STATS_SIGNAL, 'estimator x')).toThrow(
      'estimator x reads signal example.rolloutStats per token, but it is per-rollout',
    );
  });

  it('runs on the policy workers when it says how (onWorkers), in the main thread otherwise; the rows agree', async () => {
    const want = (await computeSignals(model, batch, parseSignalConfig({}, [ROLLOUT_STATS_SIGNAL]), pass)).signals.getPerRollout(
      ROLLOUT_STATS_SIGNAL,
    );
    const before = runs.count;
    const remote = await computeSignalsOnWorkers(workers, model, batch, parseSignalConfig({}, [ROLLOUT_STATS_SIGNAL]), pass);
    expect(runs.count).toBe(before); // not in this thread
    expect(workers.lastRun!.task.every((s) => s > 0)).toBe(true); // both workers had rows
    const got = remote.signals.getPerRollout(ROLLOUT_STATS_SIGNAL);
    expect(got.width).toBe(2);
    got.values.forEach((v, k) => expect(v).toBeCloseTo(want.values[k]!, 5));
    const local = await computeSignalsOnWorkers(workers, model, batch, parseSignalConfig({}, [`${ROLLOUT_STATS_SIGNAL}.local`]), pass);
    expect(runs.count).toBe(before + 1); // the one without onWorkers ran here, on the whole batch
    expect(local.signals.getPerRollout(`${ROLLOUT_STATS_SIGNAL}.local`).values).toEqual(want.values);
  });
});
