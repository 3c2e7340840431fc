import type { RolloutBatch } from '@rlvr/core';
import { batchLogprobs, compiledModuleUrl, type Qwen3Model } from '@rlvr/policy';
import { defineBackend, type SaliencyResult } from '@rlvr/saliency';
import { z } from 'zod';

/** The per-rollout signal this backend produces: `[B, 2]`, the mean log-prob of a completion and its mean entropy. */
export const ROLLOUT_STATS_SIGNAL = 'example.rolloutStats';

export const RolloutStatsConfigSchema = z.strictObject({
  temperature: z.number().positive().default(1),
  tokenBudget: z.number().int().positive().default(8192),
  padId: z.number().int().nonnegative().default(0),
});

/** How many times this thread ran the backend: the tests tell where it ran by it. */
export const runs = { count: 0 };

async function rolloutStats(
  model: Qwen3Model,
  batch: RolloutBatch,
  cfg: z.output<typeof RolloutStatsConfigSchema>,
): Promise<SaliencyResult> {
  runs.count++;
  const B = batch.numRollouts;
  const { logprobs, entropy } = await batchLogprobs(model, batch, cfg);
  const scores = new Float32Array(B * 2);
  const o = batch.completionOffsets;
  for (let i = 0; i < B; i++) {
    const n = o[i + 1]! - o[i]!;
    let lp = 0;
    let h = 0;
    for (let t = o[i]!; t < o[i + 1]!; t++) {
      lp += logprobs[t]!;
      h += entropy[t]!;
    }
    scores[2 * i] = n > 0 ? lp / n : 0;
    scores[2 * i + 1] = n > 0 ? h / n : 0;
  }
  return { signal: ROLLOUT_STATS_SIGNAL, scores, width: 2, hasScores: new Uint8Array(B).fill(1), missing: 0 };
}

const spec = {
  name: 'rollout-stats',
  signal: ROLLOUT_STATS_SIGNAL,
  shape: 'rollout',
  configSchema: RolloutStatsConfigSchema,
  run: rolloutStats,
} as const;

/**
 * A per-rollout backend that says how to run on policy workers: a worker imports this module
 * (compiled: `compiledModuleUrl` maps src/ to dist/) and reads `rolloutStatsBackend`.
 */
export const rolloutStatsBackend = defineBackend({
  ...spec,
  onWorkers: { module: compiledModuleUrl(new URL('./rollout-stats.js', import.meta.url)), exportName: 'rolloutStatsBackend' },
});

/** The same backend without `onWorkers` (another name): it runs in the main thread. */
export const rolloutStatsLocalBackend = defineBackend({ ...spec, name: 'rollout-stats-local', signal: `${ROLLOUT_STATS_SIGNAL}.local` });
