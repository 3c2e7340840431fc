import { CoreError } from './errors.js';

/** Names of the per-token signals rlvr's own packages produce. Others may add their own. */
export const SIGNAL_NAMES = {
  /** GRAIL raw score: L2 norm of (dL_ans/de x e) per completion token */
  gradXEmb: 'saliency.gradXEmb',
  /** OAR-G raw score: |sum_d g_d e_d| of the noisy-embedding KL gradient */
  noisyKl: 'saliency.noisyKl',
  /** leave-one-out perturbation score: KL of the answer distribution with the token masked */
  perturbation: 'saliency.perturbation',
  /** token log-probs under the behaviour (old) policy */
  logprobsOld: 'logprobs.old',
  /** per-token entropy of the policy's next-token distribution */
  entropy: 'policy.entropy',
} as const;
export type SignalName = string;

/**
 * Named per-token arrays aligned with a batch's `completionTokens`: each is
 * `Float32Array[totalTokens]`. Lengths are checked on the way in; a missing
 * signal is an error that names who needed it and what is available.
 */
export class Signals {
  readonly totalTokens: number;
  readonly #map = new Map<SignalName, Float32Array>();

  constructor(totalTokens: number, initial: Record<SignalName, Float32Array> = {}) {
    this.totalTokens = totalTokens;
    for (const [name, values] of Object.entries(initial)) this.set(name, values);
  }

  set(name: SignalName, values: Float32Array): this {
    if (!(values instanceof Float32Array)) throw new CoreError('invalid_signal', `signal ${name} must be a Float32Array`, { field: name });
    if (values.length !== this.totalTokens) {
      throw new CoreError(
        'invalid_signal',
        `signal ${name} has ${values.length} values, expected ${this.totalTokens} (one per completion token)`,
        { field: name },
      );
    }
    this.#map.set(name, values);
    return this;
  }

  has(name: SignalName): boolean {
    return this.#map.has(name);
  }

  /** The signal, or a `CoreError('missing_signal')` naming `neededBy` and the available signals. */
  get(name: SignalName, neededBy = 'caller'): Float32Array {
    const v = this.#map.get(name);
    if (v === undefined) {
      const have = [...this.#map.keys()];
      throw new CoreError('missing_signal', `${neededBy} needs signal ${name}; available: ${have.length ? have.join(', ') : '(none)'}`, {
        field: name,
      });
    }
    return v;
  }

  names(): SignalName[] {
    return [...this.#map.keys()];
  }
}
