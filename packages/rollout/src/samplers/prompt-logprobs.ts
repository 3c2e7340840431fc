/**
 * The log-prob of every prompt token given the ones before it (OpenAI's `echo` with `logprobs`,
 * vLLM's `prompt_logprobs`): what RL stacks use to score a given text. One forward pass over the
 * prompt; the first token has none.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { Qwen3Model } from '@rlvr/policy';
import { logSoftmaxAt, topLogprobs } from './token-sampling.js';

export interface PromptLogprobs {
  /** `[P]`: null for the first token, then log p(ids[t] | ids[<t]) at the temperature */
  logprobs: (number | null)[];
  /** `[P]`: null for the first token, then the `k` most likely `[id, logprob]` at each position */
  top: ([number, number][] | null)[];
}

/**
 * Prompt log-probs of `ids` as log-softmax(logits / T) (T = 1 when `temperature` is 0: the
 * convention of the sampled tokens' log-probs, so a prompt + completion scores the same either way).
 */
export async function promptLogprobs(model: Qwen3Model, ids: readonly number[], k: number, temperature: number): Promise<PromptLogprobs> {
  const P = ids.length;
  const { V } = model.dims;
  const logits = tf.tidy(() => tf.reshape(model.logits({ ids: tf.tensor2d([[...ids]], [1, P], 'int32') }), [P, V]));
  let host: Float32Array;
  try {
    host = (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
  const out: PromptLogprobs = { logprobs: [null], top: [null] };
  for (let t = 1; t < P; t++) {
    const row = host.subarray((t - 1) * V, t * V);
    out.logprobs.push(logSoftmaxAt(row, temperature)(ids[t]!));
    out.top.push(k > 0 ? topLogprobs(row, k, temperature) : []);
  }
  return out;
}
