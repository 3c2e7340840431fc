// The training step that the benchmarks time, in one place for the main thread (policy's
// bench.mjs, saliency's bench.mjs) and a policy worker's share (train-share.mjs).

/**
 * Gradients of every parameter of `lossOf(item)`, summed over `items` (one forward + backward
 * per item, a micro-batch). Returns the sums by variable name (the caller disposes them).
 * @param {typeof import('@tensorflow/tfjs-core')} tf
 * @param {import('@rlvr/policy').Qwen3Model} model
 * @template T
 * @param {T[]} items
 * @param {(item: T) => object} lossOf  a scalar tensor, built inside the gradient tape
 */
export function summedGrads(tf, model, items, lossOf) {
  let acc = null;
  for (const item of items) {
    const { value, grads } = tf.variableGrads(() => lossOf(item), model.variables());
    value.dispose();
    if (acc === null) acc = grads;
    else
      for (const k of Object.keys(grads)) {
        const sum = tf.add(acc[k], grads[k]);
        tf.dispose([acc[k], grads[k]]);
        acc[k] = sum;
      }
  }
  return acc ?? {};
}

/**
 * The policy benchmark's loss of a micro-batch `{ ids, targets, mask }` (int32 `[mb, T]` each):
 * -(sum of its token log-probs) / `denom`, the whole batch's token count (a mean over the batch).
 */
export const tokenLoss =
  (tf, model, denom, { checkpoint = false } = {}) =>
  ({ ids, targets, mask }) => {
    const h = model.hidden({ ids, attentionMask: mask, checkpoint });
    return tf.div(tf.neg(tf.sum(model.tokenLogprobs(h, targets).logprobs)), denom);
  };

/** Random ids `[mb, T]` (seeded), their next-token targets (0 after the last) and an all-ones mask. */
export function randomMicroBatch(tf, vocab, mb, T, seed) {
  const ids = tf.randomUniform([mb, T], 0, vocab, 'int32', seed);
  const targets = tf.concat([tf.slice(ids, [0, 1], [mb, T - 1]), tf.zeros([mb, 1], 'int32')], 1);
  return { ids, targets, mask: tf.ones([mb, T], 'int32') };
}
