// The training step that the policy benchmarks time, in one place for the main thread
// (bench.mjs) and a policy worker's share (train-share.mjs).

/**
 * Gradients of every parameter of -(sum of token log-probs) / `denom`, summed over micro-batches:
 * one forward + backward per micro-batch. Returns the sums by variable name (the caller disposes them).
 * @param {typeof import('@tensorflow/tfjs-core')} tf
 * @param {import('@rlvr/policy').Qwen3Model} model
 * @param {Array<{ ids: object, targets: object, mask: object }>} micro  int32 [mb, T] each
 * @param {number} denom  the whole batch's token count (the loss is a mean over it)
 * @param {{ checkpoint?: boolean }} [options]
 */
export function summedGrads(tf, model, micro, denom, options = {}) {
  let acc = null;
  for (const { ids, targets, mask } of micro) {
    const { value, grads } = tf.variableGrads(() => {
      const h = model.hidden({ ids, attentionMask: mask, checkpoint: options.checkpoint ?? false });
      return tf.div(tf.neg(tf.sum(model.tokenLogprobs(h, targets).logprobs)), denom);
    }, model.variables());
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

/** Random ids `[mb, T]` (seeded), their next-token targets (0 after the last) and an all-ones mask. */
export function randomMicroBatch(tf, vocab, mb, T, seed) {
  const ids = tf.randomUniform([mb, T], 0, vocab, 'int32', seed);
  const targets = tf.concat([tf.slice(ids, [0, 1], [mb, T - 1]), tf.zeros([mb, 1], 'int32')], 1);
  return { ids, targets, mask: tf.ones([mb, T], 'int32') };
}
