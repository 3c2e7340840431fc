import { composeEstimator, drGrpo, registerEstimator, registerWeighting } from '@rlvr/advantages';
import { entropyWeighting } from './entropy.js';

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
