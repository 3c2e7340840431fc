// One policy worker's share of bench.mjs's training step, run by PolicyWorkers in each worker:
// the same forward + backward (mean token log-prob loss over the whole batch, gradients of every
// parameter, summed over micro-batches) on this worker's rows, the sums written into its
// gradient buffer for the main thread to reduce.

/**
 * @param {import('@rlvr/policy').WorkerContext} ctx
 * @param {{ rows: number, batch: number, seq: number, microBatch: number, seed: number }} input
 *   rows: this worker's rows of the batch; batch: the whole batch (the loss is a mean over it)
 */
export function trainShare(ctx, input) {
  const { tf, model } = ctx;
  const { rows, batch, seq: T, microBatch, seed } = input;
  const vocab = model.config.vocab_size;
  let acc = null;
  for (let s = 0; s < rows; s += microBatch) {
    const mb = Math.min(microBatch, rows - s);
    const { grads, value } = tf.variableGrads(() => {
      const ids = tf.randomUniform([mb, T], 0, vocab, 'int32', seed + s);
      const targets = tf.concat([tf.slice(ids, [0, 1], [mb, T - 1]), tf.zeros([mb, 1], 'int32')], 1);
      const h = model.hidden({ ids, attentionMask: tf.ones([mb, T], 'int32') });
      return tf.div(tf.neg(tf.sum(model.tokenLogprobs(h, targets).logprobs)), batch * T);
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
  const present = [];
  for (const slot of ctx.layout.slots) {
    const v = model.params.get(slot.name);
    const g = v === undefined ? undefined : acc?.[v.name];
    if (g === undefined) continue;
    ctx.gradients.set(g.dataSync(), slot.offset);
    present.push(slot.name);
  }
  if (acc !== null) tf.dispose(Object.values(acc));
  return { present };
}
