import { composeEstimator, drGrpo, grpo, uniform, type AdvantageEstimator } from '@rlvr/advantages';
import { entropyShaping } from './method.js';

export { shapeAdvantages } from './shaping.js';
export { entropyShaping, EntropyShapingOptions } from './method.js';

/** `entropy-shaping`: Dr. GRPO's advantages (r - group mean) shaped by the policy's entropy. */
export const entropyShapingEstimator = entropyShaping(
  composeEstimator(drGrpo, uniform, 'dr-grpo'),
  'entropy-shaping',
  'Dr. GRPO advantages + min(alpha * entropy, |A| / kappa) (Cheng et al. 2025)',
);

/** `grpo-entropy-shaping`: GRPO's advantages (the paper's base) shaped by the policy's entropy. */
export const grpoEntropyShapingEstimator = entropyShaping(
  composeEstimator(grpo, uniform, 'grpo'),
  'grpo-entropy-shaping',
  'GRPO advantages + min(alpha * entropy, |A| / kappa) (Cheng et al. 2025)',
);

/** What `register` needs of the plugin API of `rlvr train --plugin` (the trainer's own registry). */
export interface PluginRegistry {
  registerEstimator(estimator: AdvantageEstimator): unknown;
}

/**
 * The `rlvr train --plugin` entry: registers both estimators in the trainer's registry. The entropy
 * they read is `policy.entropy`, which the trainer's signal step already computes (from the policy
 * pass that gives the old log-probs; again per mini-batch with `saliency.refresh: minibatch`), so this
 * plugin adds no signal backend.
 */
export function register(api: PluginRegistry): void {
  api.registerEstimator(entropyShapingEstimator);
  api.registerEstimator(grpoEntropyShapingEstimator);
}
