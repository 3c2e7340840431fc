/**
 * A pool of worker threads that run the verifier with a hard wall-clock budget per item. An item that runs past
 * `timeoutMs` has its worker terminated (piscina aborts a running task by stopping its thread) and answers
 * `{ equal: false, reason: "timeout" }`; the pool starts a fresh worker and carries on. Items are handed to
 * workers only when one is free, in chunks (one message per chunk keeps the main thread's cost per item small);
 * each item's budget starts when the worker reaches it, so neither queueing nor a worker's start-up counts.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { MathVerifyError, assertText } from './errors.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';
import { checkBatch } from './verify.js';
import type { RewardResult, VerifyResult } from './grade.js';
import type { WorkerItem, WorkerTask } from './worker.js';

/** JSON of each resolved options object, computed once (options are sent to workers as strings). */
const optionKeys = new WeakMap<object, string>();

/** Longest a worker may take to start before its item is answered as a timeout. */
const STARTUP_LIMIT_MS = 30_000;

export const PoolOptionsSchema = z
  .object({
    /** Worker threads (default: the machine's available parallelism). */
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(256)
      .default(() => availableParallelism()),
    /** Wall-clock budget per item, in milliseconds, measured from when a worker takes the item. */
    timeoutMs: z.number().int().min(1).max(600_000).default(5_000),
    /** Most items sent to a worker in one message (fewer when the queue is short, so all workers get some). */
    chunkSize: z.number().int().min(1).max(1024).default(16),
    /** Heap limit of each worker (MiB): a memory blow-up kills that worker, not the caller. */
    workerMemoryMb: z.number().int().min(32).max(65_536).default(1024),
    /** Verifier options used when a call passes none. */
    verify: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export type PoolOptions = z.infer<typeof PoolOptionsSchema>;
export type PoolOptionsInput = z.input<typeof PoolOptionsSchema>;

/** Per-call options of the pool's grading methods. */
export interface PoolCallOptions {
  /**
   * Cancels the call: its items still queued leave the queue at once, items already handed to a worker are skipped
   * if not started (or finish, and their result is dropped), and none of them is counted in `stats` but as
   * `cancelled`. The call rejects with `signal.reason` (an `AbortError` `DOMException` for a plain `abort()`).
   */
  signal?: AbortSignal;
}

/** One item of a call, from the queue to its answer. */
interface Job {
  item: WorkerItem;
  resolve: (r: RewardResult | VerifyResult) => void;
  reject: (e: unknown) => void;
  /** Its call was cancelled: the item is out of the queue, and a result that still comes back is dropped. */
  cancelled: boolean;
  /** While in a worker's chunk: the chunk's skip flags and this item's index there. */
  slot: { skip: Uint8Array; index: number } | null;
}

/** Counters a caller can log: how many items ran, timed out, killed their worker, or were cancelled by their caller. */
export interface PoolStats {
  completed: number;
  timedOut: number;
  failed: number;
  cancelled: number;
}

type Raw = RewardResult | VerifyResult;

const asReward = (r: Raw): RewardResult => ('reward' in r ? r : { reward: 0, extracted: null, reason: r.reason, answer: null });
const asVerify = (r: Raw): VerifyResult => ('equal' in r ? r : { equal: false, reason: r.reason, gold: null, pred: null });
const closedError = (cause?: unknown): MathVerifyError =>
  new MathVerifyError('pool_closed', 'the verifier pool is closed', {}, cause === undefined ? undefined : { cause });

export class VerifierPool {
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly chunkSize: number;
  private readonly piscina: Piscina;
  private readonly defaultOptions: string;
  private queue: Job[] = [];
  private inFlight = 0;
  private pumpScheduled = false;
  private closed = false;
  private readonly counters: PoolStats = { completed: 0, timedOut: 0, failed: 0, cancelled: 0 };

  constructor(options: PoolOptionsInput = {}) {
    const r = PoolOptionsSchema.safeParse(options);
    if (!r.success)
      throw new MathVerifyError(
        'invalid_options',
        `invalid pool options: ${formatZodIssues(r.error.issues, options)}`,
        {},
        { cause: r.error },
      );
    this.concurrency = r.data.concurrency;
    this.timeoutMs = r.data.timeoutMs;
    this.chunkSize = r.data.chunkSize;
    this.defaultOptions = JSON.stringify(resolveOptions(r.data.verify as VerifyOptionsInput));
    this.piscina = new Piscina({
      // a CommonJS entry that import()s worker.js (see worker-entry.cts: why piscina must not require() an ES module)
      filename: new URL('./worker-entry.cjs', import.meta.url).href,
      minThreads: this.concurrency,
      maxThreads: this.concurrency,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: r.data.workerMemoryMb },
    });
  }

  get stats(): PoolStats {
    return { ...this.counters };
  }

  /** `mathReward` in a worker; `{ reward: 0, reason: "timeout" }` when it runs past the budget. */
  async reward(completion: string, gold: string, options?: VerifyOptionsInput, call: PoolCallOptions = {}): Promise<RewardResult> {
    assertText(completion, 'completion');
    assertText(gold, 'gold');
    const [r] = await this.submit([{ kind: 'reward', a: completion, b: gold, options: this.optionsKey(options) }], call.signal);
    return asReward(r as Raw);
  }

  /** `verifyAnswer` in a worker; `{ equal: false, reason: "timeout" }` when it runs past the budget. */
  async verify(gold: string, pred: string, options?: VerifyOptionsInput, call: PoolCallOptions = {}): Promise<VerifyResult> {
    assertText(gold, 'gold');
    assertText(pred, 'pred');
    const [r] = await this.submit([{ kind: 'verify', a: gold, b: pred, options: this.optionsKey(options) }], call.signal);
    return asVerify(r as Raw);
  }

  /** Rewards for parallel arrays, in order. Bad input (a non-string, arrays of different lengths) rejects before anything is queued. */
  async rewardBatch(
    completions: readonly string[],
    golds: readonly string[],
    options?: VerifyOptionsInput,
    call: PoolCallOptions = {},
  ): Promise<RewardResult[]> {
    checkBatch('rewardBatch', completions, golds);
    const key = this.optionsKey(options);
    const items = completions.map((c, i): WorkerItem => ({ kind: 'reward', a: c, b: golds[i] as string, options: key }));
    return (await this.submit(items, call.signal)).map(asReward);
  }

  /** Stops the workers; pending items are rejected with `pool_closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(closedError());
    await this.piscina.destroy();
  }

  private optionsKey(options: VerifyOptionsInput | undefined): string {
    if (options === undefined) return this.defaultOptions;
    const resolved = resolveOptions(options);
    let key = optionKeys.get(resolved);
    if (key === undefined) {
      key = JSON.stringify(resolved);
      optionKeys.set(resolved, key);
    }
    return key;
  }

  /** Queues the items of one call; resolves with their results in order, or rejects on the first failure or on `signal`. */
  private submit(items: WorkerItem[], signal: AbortSignal | undefined): Promise<Raw[]> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const results: Raw[] = new Array(items.length);
      let left = items.length;
      let settled = false;
      const jobs: Job[] = [];
      const settle = (): void => {
        settled = true;
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        if (settled) return;
        settle();
        this.cancel(jobs);
        reject(signal?.reason);
      };
      for (let i = 0; i < items.length; i++) {
        jobs.push({
          item: items[i] as WorkerItem,
          cancelled: false,
          slot: null,
          resolve: (r) => {
            if (settled) return;
            results[i] = r;
            if (--left === 0) {
              settle();
              resolve(results);
            }
          },
          reject: (e) => {
            if (settled) return;
            settle();
            reject(e);
          },
        });
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(...jobs);
      // Let a synchronous burst of submissions (a batch) queue up before chunking it.
      if (!this.pumpScheduled) {
        this.pumpScheduled = true;
        queueMicrotask(() => {
          this.pumpScheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Takes a cancelled call's items out of the queue at once; those already in a worker are skipped if not started. */
  private cancel(jobs: Job[]): void {
    let queued = false;
    for (const j of jobs) {
      if (j.cancelled) continue;
      j.cancelled = true;
      this.counters.cancelled++;
      if (j.slot !== null) j.slot.skip[j.slot.index] = 1;
      else queued = true;
    }
    if (queued) this.queue = this.queue.filter((j) => !j.cancelled);
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.queue.length > 0 && !this.closed) {
      const size = Math.max(1, Math.min(this.chunkSize, Math.ceil(this.queue.length / this.concurrency)));
      const jobs = this.queue.splice(0, size);
      this.inFlight++;
      this.runChunk(jobs).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /**
   * Runs a chunk of items in one worker. The worker writes the start time and index of the item it is on into
   * shared memory; the timer checks that item's own budget. When an item overruns (or the worker dies), that item
   * is answered and the rest of the chunk goes back to the front of the queue. Shared memory also carries one skip
   * flag per item, set when the item's call is cancelled.
   */
  private async runChunk(jobs: Job[]): Promise<void> {
    const ac = new AbortController();
    const shared = new SharedArrayBuffer(16 + jobs.length);
    const progress = new Float64Array(shared, 0, 2);
    const skip = new Uint8Array(shared, 16, jobs.length);
    jobs.forEach((j, index) => (j.slot = { skip, index }));
    const dispatched = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const check = (): void => {
      const now = Date.now();
      const s = progress[0] as number;
      if (s > 0 && now - s >= this.timeoutMs) ac.abort();
      // Not started yet: wait, but not forever (a worker that never starts is a failure too).
      else if (s === 0 && now - dispatched > STARTUP_LIMIT_MS + this.timeoutMs) ac.abort();
      else timer = setTimeout(check, s > 0 ? s + this.timeoutMs - now : this.timeoutMs);
    };
    timer = setTimeout(check, this.timeoutMs);
    const options: string[] = [];
    const items = jobs.map(({ item }) => {
      let o = options.indexOf(item.options);
      if (o < 0) o = options.push(item.options) - 1;
      return { kind: item.kind, a: item.a, b: item.b, o };
    });
    const task: WorkerTask = { items, options, progress: shared };
    try {
      const results = (await this.piscina.run(task, { signal: ac.signal })) as (Raw | null)[];
      jobs.forEach((j, i) => {
        j.slot = null;
        if (j.cancelled) return;
        this.counters.completed++;
        j.resolve(results[i] as Raw);
      });
    } catch (e) {
      for (const j of jobs) j.slot = null;
      if (this.closed) {
        for (const j of jobs) j.reject(closedError(e));
        return;
      }
      const at = progress[0] === 0 ? 0 : (progress[1] as number);
      const stuck = jobs[at] as Job;
      if (!stuck.cancelled) {
        if (ac.signal.aborted) {
          this.counters.timedOut++;
          stuck.resolve({ equal: false, reason: 'timeout', gold: null, pred: null });
        } else {
          // The worker died (out of memory, a crash): the item is answered, the pool carries on.
          this.counters.failed++;
          stuck.resolve({ equal: false, reason: `worker_failed: ${e instanceof Error ? e.message : String(e)}`, gold: null, pred: null });
        }
      }
      // The other items of the chunk (done or not; their results died with the worker) are run again.
      this.queue.unshift(...jobs.filter((j, i) => i !== at && !j.cancelled));
    } finally {
      clearTimeout(timer);
    }
  }
}
