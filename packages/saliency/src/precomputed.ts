import { SIGNAL_NAMES, totalTokens, type RolloutBatch } from '@rlvr/core';
import { z } from 'zod';
import { defineBackend } from './backend.js';
import { parseBackendConfig } from './config.js';
import { SaliencyError } from './errors.js';
import { countMissing, type SaliencyResult } from './result.js';

/** `precomputed`: scores made elsewhere (another framework), checked and placed in the batch layout. */
export const PrecomputedConfigSchema = z.strictObject({
  /** Per rollout: one score per completion token, or null for a rollout without scores. */
  // Values are checked by the backend, which names the rollout and token of a bad one.
  scores: z.array(
    z.union([
      z.custom<ArrayLike<number>>(
        (v) => Array.isArray(v) || v instanceof Float32Array,
        'must be an array of numbers, a Float32Array or null',
      ),
      z.null(),
    ]),
  ),
  /** Which signal the scores stand for. */
  signal: z.string().min(1).default(SIGNAL_NAMES.gradXEmb),
});
export type PrecomputedConfig = z.output<typeof PrecomputedConfigSchema>;
export type PrecomputedConfigInput = z.input<typeof PrecomputedConfigSchema>;

/**
 * Scores made elsewhere (another framework), checked and laid out like the batch: one array per
 * rollout with exactly one finite score >= 0 per completion token, or null for a rollout without
 * scores. Errors name the rollout and the token.
 */
export function precomputed(batch: RolloutBatch, config: PrecomputedConfigInput): SaliencyResult {
  return place(batch, parseBackendConfig(PrecomputedConfigSchema, config, 'precomputed'));
}

function place(batch: RolloutBatch, cfg: PrecomputedConfig): SaliencyResult {
  const B = batch.numRollouts;
  if (cfg.scores.length !== B)
    throw new SaliencyError('invalid_scores', `expected scores for ${B} rollouts, found ${cfg.scores.length}`, { field: 'scores' });
  const out: SaliencyResult = {
    signal: cfg.signal,
    scores: new Float32Array(totalTokens(batch)),
    hasScores: new Uint8Array(B),
    missing: B,
  };
  cfg.scores.forEach((s, i) => {
    if (s === null) return;
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    if (s.length !== cl)
      throw new SaliencyError('invalid_scores', `has ${s.length} scores but the completion has ${cl} tokens`, {
        rollout: i,
        field: 'scores',
      });
    for (let t = 0; t < cl; t++) {
      const v = s[t]!;
      if (typeof v !== 'number' || !(v >= 0 && v < Infinity))
        throw new SaliencyError('invalid_scores', `scores must be finite and >= 0, found ${v}`, { rollout: i, field: `scores.${t}` });
      out.scores[c0 + t] = v;
    }
    out.hasScores[i] = 1;
  });
  return countMissing(out);
}

/** Scores made elsewhere: no model runs. */
export const precomputedBackend = defineBackend({
  name: 'precomputed',
  signal: SIGNAL_NAMES.gradXEmb,
  configSchema: PrecomputedConfigSchema,
  needsModel: false,
  run: place,
});
