import type { AdvantageEstimator } from '@rlvr/advantages';
import type { defineBackend, saliencyBackends } from '@rlvr/saliency';
import { garBackend } from './backend.js';
import { garEstimator } from './method.js';

export { GarBackendConfigSchema, combineAnchors, garCosines, garSequences, garWorkerBackend } from './backend.js';
export type { GarBackendConfig, TeacherAnchors } from './backend.js';
export { GAR_COSINE, GarConfigSchema, garEstimator, shapedRewards } from './method.js';
export type { GarConfig, GarConfigInput } from './method.js';
export { cosines, crossInner, gradTimesHidden, materialize, materializedInner, selfInner, vectorCosines } from './kernel.js';
export type { Sequences } from './kernel.js';

/** What `register` needs of the plugin API of `rlvr train --plugin`. */
export interface PluginRegistry {
  registerEstimator(estimator: AdvantageEstimator): unknown;
  saliencyBackends: Pick<typeof saliencyBackends, 'register'>;
  defineBackend: typeof defineBackend;
}

/** The `rlvr train --plugin` entry: registers the `gar` estimator and the `gar` signal backend in the trainer's registries. */
export function register(api: PluginRegistry): void {
  api.registerEstimator(garEstimator);
  api.saliencyBackends.register(garBackend(api.defineBackend));
}
