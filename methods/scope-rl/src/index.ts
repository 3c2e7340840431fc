import type { AdvantageEstimator } from '@rlvr/advantages';
import { scopeRlEstimator } from './method.js';

export { scopeRlEstimator, scopeRlStage, routeGroups, qprRewards, ScopeRlOptions } from './method.js';
export { processShape } from './process-shape.js';
export type { ProcessShapeOptions } from './process-shape.js';
export { scaffoldReward, readLabelled } from './reward.js';
export type { LabelledAnswers, ScaffoldGrade } from './reward.js';
export { scaffoldOf, scaffoldedQuestion, subLabel, MAIN_LABEL } from './scaffold.js';
export { ScopeRlError } from './errors.js';
export type { ScopeRlErrorCode } from './errors.js';

/** What `register` needs of the plugin API of `rlvr train --plugin`. */
export interface PluginRegistry {
  registerEstimator(estimator: AdvantageEstimator): unknown;
}

/** The `rlvr train --plugin` entry: registers `scope-rl` (its rollout stage travels with it) in the trainer's registry. */
export function register(api: PluginRegistry): void {
  api.registerEstimator(scopeRlEstimator);
}
