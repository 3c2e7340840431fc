import type { AdvantageEstimator } from '@rlvr/advantages';
import type { defineBackend, saliencyBackends } from '@rlvr/saliency';
import { processStepsBackend } from './backend.js';
import { verigateEstimator } from './method.js';

export { gateDegenerate } from './gate.js';
export type { StepOptions } from './gate.js';
export { verigateEstimator, PROCESS_STEPS } from './method.js';
export { arithmeticChecker, stepsFromCuts, stepSignal } from './steps.js';
export type { ProcessScorer, ProcessStep, StepCompletion, SyncProcessScorer } from './steps.js';
export { vllmPrm, VllmPrmOptionsSchema, segmentSteps, prmInput, questionOf, QWEN_PRM_SYSTEM, QWEN_PRM_TEMPLATE } from './vllm-prm.js';
export type { VllmPrmOptions, VllmPrmScorer } from './vllm-prm.js';
export { ProcessScoreError } from './errors.js';
export type { ProcessScoreErrorCode } from './errors.js';

/** What `register` needs of the plugin API of `rlvr train --plugin`. */
export interface PluginRegistry {
  registerEstimator(estimator: AdvantageEstimator): unknown;
  saliencyBackends: Pick<typeof saliencyBackends, 'register'>;
  defineBackend: typeof defineBackend;
}

/** The `rlvr train --plugin` entry: registers `verigate` and the `process-steps` backend in the trainer's registries. */
export function register(api: PluginRegistry): void {
  api.registerEstimator(verigateEstimator);
  api.saliencyBackends.register(processStepsBackend(api.defineBackend));
}
