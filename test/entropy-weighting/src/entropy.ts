import { z } from 'zod';
import { SIGNAL_NAMES } from '@rlvr/core';
import type { TokenWeighting } from '@rlvr/advantages';

export const EntropyConfigSchema = z
  .strictObject({
    /** sharpness: w = (H / mean H) ^ power */
    power: z.number().positive().default(1),
    /** lower clip bound of the weights */
    entropyWMin: z.number().nonnegative().default(0.25),
    /** upper clip bound of the weights */
    entropyWMax: z.number().positive().default(4),
    /** keeps the ratio finite for rollouts whose entropy is all 0 */
    entropyEps: z.number().positive().default(1e-6),
  })
  .superRefine((c, ctx) => {
    if (c.entropyWMin > c.entropyWMax)
      ctx.addIssue({ code: 'custom', path: ['entropyWMin'], message: `must not exceed entropyWMax (${c.entropyWMax})` });
  });
export type EntropyConfig = z.output<typeof EntropyConfigSchema>;

const SIGNAL = SIGNAL_NAMES.entropy;

/**
 * Up-weights high-entropy "forking" tokens (Wang et al. 2025, arXiv:2506.01939):
 * per rollout, w_t = clip(((H_t + eps) / (mean H + eps)) ^ power, wMin, wMax),
 * from `policy.entropy` ([T], nats). Tokens as uncertain as the rollout's average
 * get 1. Every rollout is weighted, with or without an answer.
 */
export const entropyWeighting: TokenWeighting<typeof EntropyConfigSchema> = {
  name: 'entropy',
  description: 'policy entropy relative to the rollout mean, clipped',
  configSchema: EntropyConfigSchema,
  needs: [SIGNAL],
  compute(batch, signals, _sequenceAdvantages, config, out) {
    const entropy = signals.get(SIGNAL, 'weighting entropy');
    const { power, entropyWMin: wMin, entropyWMax: wMax, entropyEps: eps } = config;
    const offsets = batch.completionOffsets;
    let clipped = 0;
    for (let i = 0; i < batch.numRollouts; i++) {
      const c0 = offsets[i]!;
      const c1 = offsets[i + 1]!;
      if (c1 === c0) continue;
      let sum = 0;
      for (let t = c0; t < c1; t++) sum += entropy[t]!;
      const inv = 1 / (sum / (c1 - c0) + eps);
      for (let t = c0; t < c1; t++) {
        let w = ((entropy[t]! + eps) * inv) ** power;
        if (w < wMin) {
          w = wMin;
          clipped++;
        } else if (w > wMax) {
          w = wMax;
          clipped++;
        }
        out[t] = w;
      }
    }
    const total = offsets[batch.numRollouts] ?? 0;
    return { entropy_clip_frac: total > 0 ? clipped / total : 0 };
  },
};
