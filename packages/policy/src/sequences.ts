import * as tf from '@tensorflow/tfjs-core';
import { PolicyError } from './errors.js';
import type { Qwen3Model } from './model.js';

/** One sequence to score: prompt tokens, then the completion tokens whose log-probs are wanted. */
export interface SequenceRow {
  prompt: ArrayLike<number>;
  completion: ArrayLike<number>;
}

/**
 * Rows packed into one right-padded batch `[B, T]` (T = longest prompt + completion):
 * `ids`, `attentionMask` (1 real, 0 pad), `targets` (ids shifted left: target at t = id at t+1),
 * and per row the prompt length (completion token j is predicted at position promptLen + j - 1).
 */
export interface PackedSequences {
  B: number;
  T: number;
  ids: Int32Array;
  attentionMask: Int32Array;
  targets: Int32Array;
  promptLengths: Int32Array;
  completionLengths: Int32Array;
}

/**
 * Check and pack rows. Errors name the row: an empty prompt (the first completion token has no
 * context), a token id outside `[0, vocabSize)`, or a sequence longer than `maxLength`.
 */
export function packSequences(rows: SequenceRow[], limits: { vocabSize: number; maxLength: number }, rowOffset = 0): PackedSequences {
  const B = rows.length;
  let T = 1;
  rows.forEach((r, i) => {
    const row = rowOffset + i;
    const n = r.prompt.length + r.completion.length;
    if (r.prompt.length === 0)
      throw new PolicyError('invalid_input', 'prompt is empty: the first completion token needs at least one token of context', { row });
    if (n > limits.maxLength)
      throw new PolicyError(
        'invalid_input',
        `sequence has ${n} tokens (prompt ${r.prompt.length} + completion ${r.completion.length}), more than the model's maximum ${limits.maxLength} (max_position_embeddings)`,
        { row },
      );
    for (const [field, arr] of [
      ['prompt', r.prompt],
      ['completion', r.completion],
    ] as const) {
      for (let j = 0; j < arr.length; j++) {
        const id = arr[j];
        if (!Number.isInteger(id) || id < 0 || id >= limits.vocabSize) {
          throw new PolicyError('invalid_input', `${field}[${j}] = ${id} is not a token id in [0, ${limits.vocabSize})`, { row });
        }
      }
    }
    T = Math.max(T, n);
  });
  const ids = new Int32Array(B * T);
  const attentionMask = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  const promptLengths = new Int32Array(B);
  const completionLengths = new Int32Array(B);
  rows.forEach((r, b) => {
    const seq = [...Array.from(r.prompt), ...Array.from(r.completion)];
    promptLengths[b] = r.prompt.length;
    completionLengths[b] = r.completion.length;
    for (let t = 0; t < seq.length; t++) {
      ids[b * T + t] = seq[t];
      attentionMask[b * T + t] = 1;
      if (t + 1 < seq.length) targets[b * T + t] = seq[t + 1];
    }
  });
  return { B, T, ids, attentionMask, targets, promptLengths, completionLengths };
}

/**
 * log p(completion token | everything before it) for each row, in batches of `batchSize` rows.
 * No gradients; inference only. Returns one Float32Array per row (its completion length).
 */
export async function completionLogprobs(
  model: Qwen3Model,
  rows: SequenceRow[],
  options: { batchSize?: number; temperature?: number } = {},
): Promise<Float32Array[]> {
  const bs = options.batchSize ?? 8;
  const out: Float32Array[] = [];
  for (let start = 0; start < rows.length; start += bs) {
    const p = packSequences(
      rows.slice(start, start + bs),
      { vocabSize: model.dims.V, maxLength: model.config.max_position_embeddings },
      start,
    );
    const lpt = tf.tidy(() => {
      const ids = tf.tensor2d(p.ids, [p.B, p.T], 'int32');
      const mask = tf.tensor2d(p.attentionMask, [p.B, p.T], 'int32');
      const h = model.hidden({ ids, attentionMask: mask });
      return model.tokenLogprobs(h, tf.tensor2d(p.targets, [p.B, p.T], 'int32'), { temperature: options.temperature }).logprobs;
    });
    const lp = (await lpt.data()) as Float32Array;
    lpt.dispose();
    for (let b = 0; b < p.B; b++) {
      const s = b * p.T + p.promptLengths[b] - 1;
      out.push(lp.slice(s, s + p.completionLengths[b]));
    }
  }
  return out;
}
