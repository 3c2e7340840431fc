import { composeEstimator, drGrpo, registerEstimator, registerWeighting } from '@rlvr/advantages';
import type { DrGrpoConfigSchema, MergedSchema } from '@rlvr/advantages';
import { entropyWeighting, type EntropyConfigSchema } from './entropy.js';

// The option types of what this package registers, so that `prepareEstimator('grpo+entropy', {...})`
// and `prepareEstimator('dr-grpo-entropy', {...})` are type-checked like the built-in estimators.
declare module '@rlvr/advantages' {
  interface WeightingSchemas {
    entropy: typeof EntropyConfigSchema;
  }
  interface EstimatorSchemas {
    'dr-grpo-entropy': MergedSchema<typeof DrGrpoConfigSchema, typeof EntropyConfigSchema>;
  }
}

export { entropyWeighting, EntropyConfigSchema } from './entropy.js';
export type { EntropyConfig } from './entropy.js';

/**
 * Register the `entropy` weighting (so `grpo+entropy`, `rloo+entropy`, ... resolve
 * by name) and a named estimator `dr-grpo-entropy`. Safe to call twice.
 */
export function registerEntropyWeighting(): void {
  registerWeighting(entropyWeighting);
  registerEstimator(estimator);
}

const estimator = composeEstimator(drGrpo, entropyWeighting, 'dr-grpo-entropy', 'Dr. GRPO advantages times policy-entropy weights');
