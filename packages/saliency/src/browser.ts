/**
 * `@rlvr/saliency` for a browser (the package's `browser` export condition): every export but the policy
 * workers' passes (worker threads) and the CLI command. `index.ts` adds those.
 */
export { SaliencyError } from './errors.js';
export type { SaliencyErrorCode } from './errors.js';
export { modelBackendOptions, parseBackendConfig } from './config.js';
export { GradXEmbConfigSchema, logprobsWithGradXEmb, gradXEmbRows, gradXEmbBackend } from './grad-x-emb.js';
export type { GradXEmbConfig, GradXEmbConfigInput, GradXEmbRows } from './grad-x-emb.js';
export { NoisyKlConfigSchema, noisyKl, noisyKlBackend } from './noisy-kl.js';
export type { NoisyKlConfig, NoisyKlConfigInput } from './noisy-kl.js';
export { PerturbationConfigSchema, perturbation, perturbationBackend } from './perturbation.js';
export type { PerturbationConfig, PerturbationConfigInput } from './perturbation.js';
export { PrecomputedConfigSchema, precomputed, precomputedBackend } from './precomputed.js';
export type { PrecomputedConfig, PrecomputedConfigInput } from './precomputed.js';
export type { SaliencyResult, FusedResult } from './result.js';
export { planMicroBatches, packRows, answerRange } from './layout.js';
export type { PackedRows, AnswerSpan, Alignment } from './layout.js';
export { defineBackend } from './backend.js';
export type { SaliencyBackend, ModelBackendSpec, FusedBackendSpec, DataBackendSpec, WorkerPlacement, MaybePromise } from './backend.js';
export { saliencyBackends, getBackend, computeSaliency } from './registry.js';
export {
  POLICY_SIGNALS,
  SIGNAL_REFRESH,
  SIGNAL_BOX,
  backendFor,
  checkSignals,
  parseSignalConfig,
  computeSignals,
  refreshSignals,
  refreshesSignals,
} from './signals.js';
export type { SignalPlan, SignalSource, SignalConfigOptions, BatchSignals, SignalRefresh, RefreshPass } from './signals.js';
