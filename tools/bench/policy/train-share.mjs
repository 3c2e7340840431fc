// One policy worker's share of bench.mjs's training step, run by PolicyWorkers in each worker:
// the same forward + backward (mean token log-prob loss over the whole batch, gradients of every
// parameter, summed over micro-batches) on this worker's rows, the sums written into its
// gradient buffer for the main thread to reduce.
import { randomMicroBatch, summedGrads, tokenLoss } from './loss.mjs';

/**
 * @param {import('@rlvr/policy').WorkerContext} ctx
 * @param {{ rows: number, batch: number, seq: number, microBatch: number, seed: number }} input
 *   rows: this worker's rows of the batch; batch: the whole batch (the loss is a mean over it)
 */
export function trainShare(ctx, input) {
  const { tf, model } = ctx;
  const { rows, batch, seq: T, microBatch, seed } = input;
  const micro = [];
  for (let s = 0; s < rows; s += microBatch)
    micro.push(randomMicroBatch(tf, model.config.vocab_size, Math.min(microBatch, rows - s), T, seed + s));
  const acc = rows > 0 ? summedGrads(tf, model, micro, tokenLoss(tf, model, batch * T)) : null;
  tf.dispose(micro.flatMap((m) => [m.ids, m.targets, m.mask]));
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
