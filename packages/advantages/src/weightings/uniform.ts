import { z } from 'zod';
import type { TokenWeighting } from '../types.js';

export const UniformConfigSchema = z.strictObject({});

/** Weight 1 on every token: the estimator is then its sequence baseline, broadcast over tokens. */
export const uniform: TokenWeighting<typeof UniformConfigSchema> = {
  name: 'uniform',
  description: 'weight 1 on every token (the plain sequence baseline)',
  configSchema: UniformConfigSchema,
  needs: [],
  compute(_batch, _signals, _seq, _config, out) {
    out.fill(1);
    return {};
  },
};
