export { SaliencyError } from './errors.js';
export type { SaliencyErrorCode, SaliencyErrorLocation } from './errors.js';
export {
  GradXEmbConfigSchema,
  NoisyKlConfigSchema,
  PerturbationConfigSchema,
  PrecomputedConfigSchema,
} from './config.js';
export type {
  GradXEmbConfig,
  GradXEmbConfigInput,
  NoisyKlConfig,
  NoisyKlConfigInput,
  PerturbationConfig,
  PerturbationConfigInput,
  PrecomputedConfig,
  PrecomputedConfigInput,
} from './config.js';
export type { SaliencyResult, FusedResult } from './result.js';
export { planMicroBatches, packRows, answerRange } from './layout.js';
export type { PackedRows, AnswerSpan, Alignment } from './layout.js';
export { logprobsWithGradXEmb, gradXEmbRows } from './grad-x-emb.js';
export type { GradXEmbRows } from './grad-x-emb.js';
export { noisyKl } from './noisy-kl.js';
export { perturbation } from './perturbation.js';
export { precomputed } from './precomputed.js';
export {
  saliencyBackends,
  computeSaliency,
  gradXEmbBackend,
  noisyKlBackend,
  perturbationBackend,
  precomputedBackend,
} from './backends.js';
export type { SaliencyBackend } from './backends.js';
