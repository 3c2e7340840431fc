import { totalTokens, type RolloutBatch } from '@rlvr/core';
import { PrecomputedConfigSchema, parseBackendConfig, type PrecomputedConfigInput } from './config.js';
import { SaliencyError } from './errors.js';
import { countMissing, type SaliencyResult } from './result.js';

/**
 * Scores made elsewhere (another framework), checked and laid out like the batch: one array per
 * rollout with exactly one finite score >= 0 per completion token, or null for a rollout without
 * scores. Errors name the rollout and the token.
 */
export function precomputed(batch: RolloutBatch, config: PrecomputedConfigInput): SaliencyResult {
  const cfg = parseBackendConfig(PrecomputedConfigSchema, config, 'precomputed');
  const B = batch.numRollouts;
  if (cfg.scores.length !== B) throw new SaliencyError('invalid_scores', `expected scores for ${B} rollouts, found ${cfg.scores.length}`, { field: 'scores' });
  const out: SaliencyResult = { signal: cfg.signal, scores: new Float32Array(totalTokens(batch)), hasScores: new Uint8Array(B), missing: B };
  cfg.scores.forEach((s, i) => {
    if (s === null) return;
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    if (s.length !== cl) throw new SaliencyError('invalid_scores', `has ${s.length} scores but the completion has ${cl} tokens`, { rollout: i, field: 'scores' });
    for (let t = 0; t < cl; t++) {
      const v = s[t]!;
      if (typeof v !== 'number' || !(v >= 0 && v < Infinity)) throw new SaliencyError('invalid_scores', `scores must be finite and >= 0, found ${v}`, { rollout: i, field: `scores.${t}` });
      out.scores[c0 + t] = v;
    }
    out.hasScores[i] = 1;
  });
  return countMissing(out);
}
