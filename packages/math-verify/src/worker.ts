/**
 * Worker-thread entry of `VerifierPool` (loaded from `dist/worker.js` by piscina). Runs the pure verifier; the
 * pool kills this thread when an item exceeds its wall-clock budget.
 */
import { type VerifyOptions, resolveOptions } from './options.js';
import { type RewardResult, type VerifyResult, mathReward, verifyAnswer } from './verify.js';

export interface WorkerTask {
  kind: 'reward' | 'verify';
  /** Completion (reward) or gold answer (verify). */
  a: string;
  /** Gold (reward) or predicted answer (verify). */
  b: string;
  /** Resolved options as JSON: parsed once per distinct value in each worker. */
  options: string;
  /** Shared 8 bytes where the worker writes the wall-clock time (ms) at which it took the item. */
  started?: SharedArrayBuffer;
}

const resolved = new Map<string, VerifyOptions>();

export default function run(task: WorkerTask): RewardResult | VerifyResult {
  if (task.started) new Float64Array(task.started)[0] = Date.now();
  let opts = resolved.get(task.options);
  if (opts === undefined) {
    opts = resolveOptions(JSON.parse(task.options) as VerifyOptions);
    if (resolved.size < 64) resolved.set(task.options, opts);
  }
  return task.kind === 'reward' ? mathReward(task.a, task.b, opts) : verifyAnswer(task.a, task.b, opts);
}
