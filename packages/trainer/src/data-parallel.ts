import { type RolloutBatch, planMicroBatches } from '@rlvr/core';
import { compiledModuleUrl, splitRollouts, type PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { addTokenSums, maskOf, type StepLossInput, type Tally } from './loss.js';
import type { GradientTaskInput, GradientTaskResult } from './workers/gradient-task.js';

let taskUrl: string | null = null;

/**
 * The rows of one optimizer step in micro-batch planning order (shortest first), cut into `n`
 * contiguous chunks of about equal padded length (`splitRollouts`): one per worker. With `n` = 1
 * it is every row, so the worker plans the same micro-batches as the in-process update.
 */
export function splitRows(batch: RolloutBatch, rows: readonly number[], tokenBudget: number, n: number): number[][] {
  return splitRollouts(batch, planMicroBatches(batch, tokenBudget, maskOf(batch.numRollouts, rows)).flat(), n);
}

/**
 * Loss and gradients of one optimizer step over `rows`, computed by the policy workers: publish the
 * weights, each worker takes a contiguous chunk of the rows, and the gradients are summed here in
 * worker order (so the result depends on the data and the worker count, never on timing). The
 * per-token sums and the seconds spent syncing go into `tally`. The caller disposes the gradients.
 */
export async function parallelGradients(
  workers: PolicyWorkers,
  model: Qwen3Model,
  input: StepLossInput,
  rows: readonly number[],
  tally: Tally,
): Promise<{ loss: number; grads: Map<string, tf.Tensor> }> {
  taskUrl ??= compiledModuleUrl(new URL('./workers/gradient-task.js', import.meta.url));
  tally.weightSyncSeconds += workers.publish(model);
  const chunks = splitRows(input.batch, rows, input.config.tokenBudget, workers.size);
  const results = await workers.run<GradientTaskInput, GradientTaskResult>(
    taskUrl,
    'gradientShare',
    chunks.map((chunk) => ({ ...input, rows: chunk })),
  );
  // the replicas re-load in parallel, before their task: the slowest one is on the step's critical path
  tally.weightSyncSeconds += Math.max(0, ...(workers.lastRun?.reload ?? []));
  const t0 = performance.now();
  let loss = 0;
  for (const r of results) {
    loss += r.loss;
    addTokenSums(tally, r.sums);
  }
  const present = results.map((r) => new Set(r.present));
  const grads = new Map<string, tf.Tensor>();
  for (const slot of workers.layout.slots) {
    let acc: tf.Tensor | undefined;
    for (let w = 0; w < results.length; w++) {
      if (!present[w]!.has(slot.name)) continue;
      // a copy: the buffer is the worker's, rewritten by its next task
      const t = tf.tensor(workers.gradients(w).slice(slot.offset, slot.offset + slot.size), slot.shape, 'float32');
      if (acc === undefined) acc = t;
      else {
        const next = tf.add(acc, t);
        acc.dispose();
        t.dispose();
        acc = next;
      }
    }
    if (acc !== undefined) grads.set(slot.name, acc);
  }
  tally.gradReduceSeconds += (performance.now() - t0) / 1000;
  return { loss, grads };
}
