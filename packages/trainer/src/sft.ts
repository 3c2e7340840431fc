import type { Qwen3Model } from '@rlvr/policy';
import { clipGradNorm, type AdamW } from './adamw.js';
import { tf } from './tf.js';

/** One supervised example: the prompt (conditioned on, not learnt) and the completion (learnt). */
export interface SftRow {
  prompt: readonly number[];
  completion: readonly number[];
}

/** Rows right-padded to the longest: `ids`, `mask`, `targets`, `lossMask` are all `[B, T]`, row-major. */
export interface PackedSft {
  rows: number;
  length: number;
  /** input ids, padding = `padId` */
  ids: Int32Array;
  /** 1 for real tokens */
  mask: Int32Array;
  /** `targets[t] = ids[t + 1]` (padding where there is none) */
  targets: Int32Array;
  /** 1 where `targets[t]` is a completion token: the positions the loss averages over */
  lossMask: Float32Array;
  /** completion tokens in the batch (the loss's denominator) */
  completionTokens: number;
}

/** Lay out rows for teacher forcing. Each row needs a non-empty completion. */
export function packSft(rows: readonly SftRow[], padId: number): PackedSft {
  const T = Math.max(...rows.map((r) => r.prompt.length + r.completion.length));
  const B = rows.length;
  const ids = new Int32Array(B * T).fill(padId);
  const mask = new Int32Array(B * T);
  const targets = new Int32Array(B * T).fill(padId);
  const lossMask = new Float32Array(B * T);
  let completionTokens = 0;
  rows.forEach((r, b) => {
    if (r.completion.length === 0 || r.prompt.length === 0) throw new RangeError(`row ${b}: prompt and completion must be non-empty`);
    const seq = [...r.prompt, ...r.completion];
    for (let t = 0; t < seq.length; t++) {
      ids[b * T + t] = seq[t]!;
      mask[b * T + t] = 1;
      if (t + 1 < seq.length) targets[b * T + t] = seq[t + 1]!;
      // position t predicts seq[t + 1]; it is a completion token from t = P - 1 on
      if (t >= r.prompt.length - 1 && t + 1 < seq.length) lossMask[b * T + t] = 1;
    }
    completionTokens += r.completion.length;
  });
  return { rows: B, length: T, ids, mask, targets, lossMask, completionTokens };
}

/**
 * Mean cross-entropy of the completion tokens given everything before them (prompt tokens and
 * padding carry no loss): `-sum(logp * lossMask) / sum(lossMask)`. A scalar to differentiate.
 */
export function sftLoss(model: Qwen3Model, packed: PackedSft): tf.Scalar {
  return tf.tidy(() => {
    const shape: [number, number] = [packed.rows, packed.length];
    const ids = tf.tensor2d(packed.ids, shape, 'int32');
    const attentionMask = tf.tensor2d(packed.mask, shape, 'int32');
    const targets = tf.tensor2d(packed.targets, shape, 'int32');
    const lossMask = tf.tensor2d(packed.lossMask, shape, 'float32');
    const h = model.hidden({ ids, attentionMask }); // [B, T, D]
    const { logprobs } = model.tokenLogprobs(h, targets); // [B, T]
    return tf.div(tf.neg(tf.sum(tf.mul(logprobs, lossMask))), Math.max(packed.completionTokens, 1)) as tf.Scalar;
  });
}

export interface SftStepResult {
  loss: number;
  /** global gradient norm before clipping */
  gradNorm: number;
  /** false when the gradient was not finite and no update was made */
  applied: boolean;
}

/** One AdamW update on the completion cross-entropy of `packed`. */
export async function sftStep(
  model: Qwen3Model,
  optimizer: AdamW,
  packed: PackedSft,
  lr: number,
  maxGradNorm: number | null,
): Promise<SftStepResult> {
  const byVar = new Map<string, string>();
  for (const [name, v] of model.params) byVar.set(v.name, name);
  const { value, grads } = tf.variableGrads(() => sftLoss(model, packed), model.variables());
  const named = new Map<string, tf.Tensor>();
  for (const [varName, g] of Object.entries(grads)) named.set(byVar.get(varName) ?? varName, g);
  const loss = (await value.data())[0]!;
  value.dispose();
  const { norm, grads: clipped } = await clipGradNorm(named, maxGradNorm);
  const applied = Number.isFinite(norm) && Number.isFinite(loss);
  if (applied) optimizer.apply(model.params, clipped, lr);
  for (const g of clipped.values()) if (![...named.values()].includes(g)) g.dispose();
  tf.dispose([...named.values()]);
  return { loss, gradNorm: norm, applied };
}
