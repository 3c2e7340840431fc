import { saliencyBackends } from '@rlvr/saliency';
import { gradNormBackend } from './grad-norm.js';

export { gradNormBackend, GradNormConfigSchema, GRAD_NORM_SIGNAL } from './grad-norm.js';
export type { GradNormConfig } from './grad-norm.js';

/** Register the `grad-norm` backend (so `computeSaliency`, the signal step and `saliencyCommand`'s `--method` find it). Safe to call twice. */
export function registerGradNorm(): void {
  saliencyBackends.register(gradNormBackend);
}
