/**
 * Worker-thread entry of `VerifierPool` (piscina loads `dist/worker-entry.cjs`, which imports this file). Runs the pure verifier; the
 * pool kills this thread when an item exceeds its wall-clock budget.
 */
import { type RewardResult, type VerifyResult, gradeAnswer, gradeCompletion } from './grade.js';
import type { VerifyOptions } from './options.js';

export interface WorkerItem {
  kind: 'reward' | 'verify';
  /** Completion (reward) or gold answer (verify). */
  a: string;
  /** Gold (reward) or predicted answer (verify). */
  b: string;
  /** Resolved options as JSON: parsed once per distinct value in each worker. */
  options: string;
}

/** A chunk as sent: each item names its options by index into `options`, so repeated options are sent once. */
export interface WorkerTask {
  items: { kind: 'reward' | 'verify'; a: string; b: string; o: number }[];
  options: string[];
  /**
   * Shared progress: two float64 (bytes 0-15): [0] = wall-clock time (ms) at which the current item started, [1] = its
   * index. The pool reads it to time each item separately and to know which item a stuck worker was running. Then one
   * byte per item: 1 = its call was cancelled, skip it.
   */
  progress: SharedArrayBuffer;
}

const resolved = new Map<string, VerifyOptions>();

function optionsFor(json: string): VerifyOptions {
  let opts = resolved.get(json);
  if (opts === undefined) {
    // Resolved and validated by the pool in the main thread; the worker does not load zod.
    opts = JSON.parse(json) as VerifyOptions;
    if (resolved.size < 64) resolved.set(json, opts);
  }
  return opts;
}

export default function run(task: WorkerTask): (RewardResult | VerifyResult | null)[] {
  const progress = new Float64Array(task.progress, 0, 2);
  const skip = new Uint8Array(task.progress, 16, task.items.length);
  const out: (RewardResult | VerifyResult | null)[] = [];
  for (let i = 0; i < task.items.length; i++) {
    if (skip[i] === 1) {
      out.push(null);
      continue;
    }
    progress[1] = i;
    progress[0] = Date.now();
    const item = task.items[i] as WorkerTask['items'][number];
    const opts = optionsFor(task.options[item.o] as string);
    out.push(item.kind === 'reward' ? gradeCompletion(item.a, item.b, opts) : gradeAnswer(item.a, item.b, opts));
  }
  return out;
}
