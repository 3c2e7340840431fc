import { type RolloutBatch, planMicroBatches, totalTokens } from '@rlvr/core';
import { splitRollouts, type PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import { tf } from './tf.js';
import { addTokenSums, maskOf, type StepLossInput, type Tally } from './loss.js';
import type { GradientTaskInput, GradientTaskResult } from './workers/gradient-task.js';
import type { LogprobsTaskInput } from './workers/logprobs-task.js';

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
  tally.weightSyncSeconds += await workers.publish(model);
  const chunks = splitRows(input.batch, rows, input.config.tokenBudget, workers.size);
  const results = await workers.run<GradientTaskInput, GradientTaskResult>(
    new URL('./workers/gradient-task.js', import.meta.url),
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

/**
 * The forward-only log-probs of every completion token of `rows` under `model`, scattered into
 * `[totalTokens]` (other tokens 0), computed by the policy workers: `model`'s weights are published
 * (the policy, or a model of the same config such as the frozen reference: the replicas then hold
 * it until the next publish), the rows cut as the update cuts them (`splitRows`), each worker runs
 * `batchLogprobs` on its chunk, and the rows are put back in worker order. With 1 worker the
 * log-probs are those of the in-process pass bit for bit (the same micro-batches). With more, a row
 * lands in another micro-batch (other rows, other padding): on the cpu backend its log-probs are
 * still the same bit for bit; on wasm a few tokens differ by under 1e-6 (the kernels' summation
 * depends on the shapes). The seconds of the weight sync go into `tally`.
 */
export async function parallelLogprobs(
  workers: PolicyWorkers,
  model: Qwen3Model,
  batch: RolloutBatch,
  rows: readonly number[],
  pass: { tokenBudget: number; padId: number; temperature: number },
  tally: Pick<Tally, 'weightSyncSeconds'>,
): Promise<Float32Array> {
  const sync0 = syncSeconds(workers);
  await workers.publish(model);
  const chunks = splitRows(batch, rows, pass.tokenBudget, workers.size);
  const parts = await workers.run<LogprobsTaskInput, Float32Array>(
    new URL('./workers/logprobs-task.js', import.meta.url),
    'logprobsShare',
    chunks.map((chunk) => ({ batch, rows: chunk, ...pass })),
  );
  tally.weightSyncSeconds += syncSeconds(workers) - sync0;
  const out = new Float32Array(totalTokens(batch));
  chunks.forEach((chunk, w) => {
    let at = 0;
    for (const i of chunk) {
      const n = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
      out.set(parts[w]!.subarray(at, at + n), batch.completionOffsets[i]!);
      at += n;
    }
  });
  return out;
}

/** The seconds the engine has spent publishing and (slowest replica per run) re-loading so far. */
export function syncSeconds(workers: PolicyWorkers): number {
  const s = workers.syncStats;
  return s.publishSeconds + s.reloadSeconds;
}
