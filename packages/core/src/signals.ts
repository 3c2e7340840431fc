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

/** Whether a signal holds one value per completion token or one vector per rollout. */
export type SignalShape = 'token' | 'rollout';

/** A per-rollout signal: `values` is `Float32Array[B * width]`, rollout i's vector at `values[i*width .. (i+1)*width)`. */
export interface RolloutSignal {
  readonly values: Float32Array;
  /** 1 for a scalar per rollout (`[B]`), k for a vector (`[B, k]`) */
  readonly width: number;
}

/**
 * Named signals of one batch. Per-token ones are `Float32Array[totalTokens]`, aligned with the
 * batch's `completionTokens`; per-rollout ones are `[B]` or `[B, k]` (`setPerRollout`). Shapes are
 * checked on the way in (and a per-rollout signal's values must be finite: the error names the
 * signal and the rollout); a missing signal is an error that names who needed it and what is available.
 */
export class Signals {
  readonly totalTokens: number;
  /** B, when known: per-rollout signals need it (`Signals.forBatch`, or the constructor's third argument) */
  readonly numRollouts: number | undefined;
  readonly #map = new Map<SignalName, Float32Array>();
  readonly #rollout = new Map<SignalName, RolloutSignal>();

  constructor(totalTokens: number, initial: Record<SignalName, Float32Array> = {}, numRollouts?: number) {
    this.totalTokens = totalTokens;
    this.numRollouts = numRollouts;
    for (const [name, values] of Object.entries(initial)) this.set(name, values);
  }

  /** Empty signals sized for `batch` (per-token and per-rollout). */
  static forBatch(batch: { numRollouts: number; completionOffsets: Int32Array }): Signals {
    return new Signals(batch.completionOffsets[batch.numRollouts] ?? 0, {}, batch.numRollouts);
  }

  /** Set per-token signal `name` (`Float32Array[totalTokens]`). */
  set(name: SignalName, values: Float32Array): this {
    if (!(values instanceof Float32Array)) throw new CoreError('invalid_signal', `signal ${name} must be a Float32Array`, { field: name });
    if (values.length !== this.totalTokens) {
      throw new CoreError(
        'invalid_signal',
        `signal ${name} has ${values.length} values, expected ${this.totalTokens} (one per completion token)`,
        { field: name },
      );
    }
    this.#rollout.delete(name);
    this.#map.set(name, values);
    return this;
  }

  /** Set per-rollout signal `name`: `values` is `Float32Array[B * width]` of finite numbers. */
  setPerRollout(name: SignalName, values: Float32Array, width = 1): this {
    const B = this.numRollouts;
    if (B === undefined)
      throw new CoreError(
        'invalid_signal',
        `signal ${name} is per-rollout, but these signals do not know the number of rollouts (use Signals.forBatch)`,
        {
          field: name,
        },
      );
    if (!(values instanceof Float32Array)) throw new CoreError('invalid_signal', `signal ${name} must be a Float32Array`, { field: name });
    if (!Number.isInteger(width) || width < 1)
      throw new CoreError('invalid_signal', `signal ${name} must have a positive integer width, got ${width}`, { field: name });
    if (values.length !== B * width) {
      const shape = width === 1 ? `[${B}]` : `[${B}, ${width}]`;
      throw new CoreError(
        'invalid_signal',
        `signal ${name} has ${values.length} values, expected ${B * width} (shape ${shape}: per rollout)`,
        {
          field: name,
        },
      );
    }
    for (let k = 0; k < values.length; k++) {
      const v = values[k]!;
      if (!Number.isFinite(v)) {
        const at = width === 1 ? '' : ` (component ${k % width})`;
        throw new CoreError('invalid_signal', `signal ${name} holds ${v}${at}: per-rollout values must be finite`, {
          rollout: Math.floor(k / width),
          field: name,
        });
      }
    }
    this.#map.delete(name);
    this.#rollout.set(name, { values, width });
    return this;
  }

  /** Whether signal `name` is here, per-token or per-rollout. */
  has(name: SignalName): boolean {
    return this.#map.has(name) || this.#rollout.has(name);
  }

  /** `token`, `rollout`, or undefined when there is no signal `name`. */
  shapeOf(name: SignalName): SignalShape | undefined {
    return this.#map.has(name) ? 'token' : this.#rollout.has(name) ? 'rollout' : undefined;
  }

  /** Per-token signal `name`, or a `CoreError('missing_signal')` naming `neededBy` and the available signals. */
  get(name: SignalName, neededBy = 'caller'): Float32Array {
    const v = this.#map.get(name);
    if (v === undefined) {
      if (this.#rollout.has(name))
        throw new CoreError('invalid_signal', `${neededBy} reads signal ${name} per token, but it is per-rollout`, { field: name });
      throw this.#missing(name, neededBy);
    }
    return v;
  }

  /** Per-rollout signal `name`, or a `CoreError('missing_signal')` naming `neededBy` and the available signals. */
  getPerRollout(name: SignalName, neededBy = 'caller'): RolloutSignal {
    const v = this.#rollout.get(name);
    if (v === undefined) {
      if (this.#map.has(name))
        throw new CoreError('invalid_signal', `${neededBy} reads signal ${name} per rollout, but it is per-token`, { field: name });
      throw this.#missing(name, neededBy);
    }
    return v;
  }

  /** Every signal's name, per-token then per-rollout. */
  names(): SignalName[] {
    return [...this.#map.keys(), ...this.#rollout.keys()];
  }

  /** A new `Signals` holding the same arrays (not copies), for a caller that replaces some. */
  clone(): Signals {
    const out = new Signals(this.totalTokens, {}, this.numRollouts);
    for (const [name, values] of this.#map) out.#map.set(name, values);
    for (const [name, values] of this.#rollout) out.#rollout.set(name, values);
    return out;
  }

  #missing(name: SignalName, neededBy: string): CoreError {
    const have = this.names();
    return new CoreError('missing_signal', `${neededBy} needs signal ${name}; available: ${have.length ? have.join(', ') : '(none)'}`, {
      field: name,
    });
  }
}
