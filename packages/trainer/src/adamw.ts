import { tf } from './tf.js';
import { z } from 'zod';

export const AdamWConfigSchema = z
  .object({
    beta1: z.number().min(0).lt(1).default(0.9),
    beta2: z.number().min(0).lt(1).default(0.999),
    eps: z.number().positive().default(1e-8),
    /** decoupled weight decay (Loshchilov & Hutter): p -= lr * wd * p */
    weightDecay: z.number().min(0).default(0.0),
  })
  .strict();
export type AdamWConfig = z.output<typeof AdamWConfigSchema>;

/** What `AdamW.snapshot` returns; dispose its tensors with `tf.dispose`. */
export interface AdamWSnapshot {
  step: number;
  moments: Map<string, { m: tf.Tensor; v: tf.Tensor }>;
}

/** The optimizer state of one parameter: first and second moments, same shape as it. */
interface Moments {
  m: tf.Variable;
  v: tf.Variable;
}

/**
 * AdamW over named variables, with moments a checkpoint can save and restore
 * (tfjs's own optimizers have no decoupled weight decay and hide their slots).
 *
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) + lr * wd * p
 */
export class AdamW {
  readonly config: AdamWConfig;
  /** number of updates applied so far (t in the bias corrections) */
  step = 0;
  readonly #moments = new Map<string, Moments>();

  constructor(config: AdamWConfig) {
    this.config = config;
  }

  /** Apply one update. `grads` maps parameter names to gradients of the same shapes. */
  apply(params: ReadonlyMap<string, tf.Variable>, grads: ReadonlyMap<string, tf.Tensor>, lr: number): void {
    const { beta1, beta2, eps, weightDecay } = this.config;
    this.step += 1;
    const bc1 = 1 - beta1 ** this.step;
    const bc2 = 1 - beta2 ** this.step;
    for (const [name, p] of params) {
      const g = grads.get(name);
      if (g === undefined) continue; // a parameter without gradient (frozen) is left as is
      const mo = this.#slot(name, p);
      // Four scopes, not one: a scope keeps its temporaries until it ends, and one scope held 16
      // parameter-sized tensors at once (10 GB for Qwen3-0.6B's embedding); these hold at most 5.
      // Same kernels in the same order, so the values are bit-identical to the single scope.
      tf.tidy(() => mo.m.assign(tf.add(tf.mul(mo.m, beta1), tf.mul(g, 1 - beta1))));
      tf.tidy(() => mo.v.assign(tf.add(tf.mul(mo.v, beta2), tf.mul(tf.square(g), 1 - beta2))));
      const update = tf.tidy(() => tf.div(tf.div(mo.m, bc1), tf.add(tf.sqrt(tf.div(mo.v, bc2)), eps)));
      tf.tidy(() => {
        let next = tf.sub(p, tf.mul(update, lr));
        if (weightDecay > 0) next = tf.sub(next, tf.mul(p, lr * weightDecay));
        p.assign(next);
      });
      update.dispose();
    }
  }

  #slot(name: string, p: tf.Variable): Moments {
    let mo = this.#moments.get(name);
    if (mo === undefined) {
      // in a tidy: the zeros a variable starts from would otherwise stay allocated beside it
      mo = tf.tidy(() => ({ m: tf.variable(tf.zerosLike(p), false), v: tf.variable(tf.zerosLike(p), false) }));
      this.#moments.set(name, mo);
    }
    return mo;
  }

  /** Moments as plain arrays, keyed `NAME.exp_avg` / `NAME.exp_avg_sq` (PyTorch's names). */
  async exportState(): Promise<{ step: number; tensors: Map<string, { shape: number[]; data: Float32Array }> }> {
    const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
    for (const [name, mo] of this.#moments) {
      tensors.set(`${name}.exp_avg`, { shape: mo.m.shape.slice(), data: (await mo.m.data()) as Float32Array });
      tensors.set(`${name}.exp_avg_sq`, { shape: mo.v.shape.slice(), data: (await mo.v.data()) as Float32Array });
    }
    return { step: this.step, tensors };
  }

  /** Restore what `exportState` wrote. Shapes must match the parameters. */
  importState(
    params: ReadonlyMap<string, tf.Variable>,
    state: { step: number; tensors: ReadonlyMap<string, { shape: readonly number[]; data: Float32Array }> },
  ): void {
    this.dispose();
    this.step = state.step;
    for (const [name, p] of params) {
      const m = state.tensors.get(`${name}.exp_avg`);
      const v = state.tensors.get(`${name}.exp_avg_sq`);
      if (m === undefined || v === undefined) continue;
      for (const [what, t] of [
        ['exp_avg', m],
        ['exp_avg_sq', v],
      ] as const) {
        if (t.shape.join(',') !== p.shape.join(',')) {
          throw new RangeError(`optimizer state ${name}.${what}: expected shape [${p.shape.join(', ')}], found [${t.shape.join(', ')}]`);
        }
      }
      this.#moments.set(
        name,
        tf.tidy(() => ({ m: tf.variable(tf.tensor(m.data, p.shape), false), v: tf.variable(tf.tensor(v.data, p.shape), false) })),
      );
    }
  }

  /** The state as it is now, for `rollback`: clones that share the moments' data, so it costs no copy. */
  snapshot(): AdamWSnapshot {
    return { step: this.step, moments: new Map([...this.#moments].map(([k, mo]) => [k, { m: tf.clone(mo.m), v: tf.clone(mo.v) }])) };
  }

  /** Put back the state of `snapshot` (moments created since are dropped); the snapshot stays the caller's to dispose. */
  rollback(snap: AdamWSnapshot): void {
    for (const [name, mo] of this.#moments) {
      const was = snap.moments.get(name);
      if (was === undefined) {
        mo.m.dispose();
        mo.v.dispose();
        this.#moments.delete(name);
      } else {
        mo.m.assign(was.m);
        mo.v.assign(was.v);
      }
    }
    this.step = snap.step;
  }

  dispose(): void {
    for (const mo of this.#moments.values()) {
      mo.m.dispose();
      mo.v.dispose();
    }
    this.#moments.clear();
  }
}

/**
 * Global L2 norm of a set of gradients, and their scaled copies when it exceeds
 * `maxNorm` (clip_grad_norm_). Returns the norm before clipping; non-finite norms
 * come back as they are so the caller can skip the update.
 */
export async function clipGradNorm(
  grads: ReadonlyMap<string, tf.Tensor>,
  maxNorm: number | null,
): Promise<{ norm: number; grads: Map<string, tf.Tensor> }> {
  const list = [...grads.values()];
  let norm = 0;
  if (list.length > 0) {
    // a chain of adds, not one addN: the webgpu backend binds every input of an addN to one shader,
    // and a model has more parameters than a device has storage buffers per stage (8 by default)
    const sq = tf.tidy(() => list.reduce<tf.Tensor>((acc, g) => tf.add(acc, tf.sum(tf.square(g))), tf.scalar(0)));
    norm = Math.sqrt((await sq.data())[0]!);
    sq.dispose();
  }
  const out = new Map<string, tf.Tensor>();
  const scale = maxNorm !== null && Number.isFinite(norm) && norm > maxNorm ? maxNorm / (norm + 1e-6) : 1;
  for (const [name, g] of grads) out.set(name, scale === 1 ? g : tf.mul(g, scale));
  return { norm, grads: out };
}
