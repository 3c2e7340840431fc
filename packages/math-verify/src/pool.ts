/**
 * A pool of worker threads that run the verifier with a hard wall-clock budget per item. An item that runs past
 * `timeoutMs` has its worker terminated (piscina aborts a running task by stopping its thread) and answers
 * `{ equal: false, reason: "timeout" }`; the pool starts a fresh worker and carries on, and the other items of that
 * worker's chunk are run again. Items are handed to workers only when one is free, in chunks: one message each way
 * per chunk, items and results packed in parallel arrays, one promise per call (a batch is one call), so the main
 * thread's cost per item stays small next to grading a cheap answer. Each item's budget starts when the worker
 * reaches it, so neither queueing nor a worker's start-up counts.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { MathVerifyError, assertText } from './errors.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';
import { checkBatch } from './verify.js';
import type { RewardResult, VerifyResult } from './grade.js';
import { type PackedResults, REWARD, VERIFY, type WorkerTask, unpackResult } from './worker.js';

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
    chunkSize: z.number().int().min(1).max(1024).default(64),
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

/**
 * One call (`reward`, `verify`, or a batch): its items as parallel arrays, one kind and one options key for all, and
 * where their results go. A call costs one promise however many items it has.
 */
interface Call {
  kind: number;
  a: readonly string[];
  b: readonly string[];
  options: string;
  results: (Raw | undefined)[];
  /** Items not answered yet. */
  left: number;
  /** Settled (answered, failed, cancelled or closed): what is still in the queue or a worker is dropped. */
  done: boolean;
  resolve: (r: Raw[]) => void;
  reject: (e: unknown) => void;
  /** Chunks in workers that hold items of this call, so that a cancellation can set their skip flags. */
  chunks: Set<Chunk>;
}

/** Items `from` to `to` (exclusive) of a call, waiting in the queue. */
interface Span {
  call: Call;
  from: number;
  to: number;
  /** Each item goes to a worker alone: its chunk's worker died before starting any item, so none is known to be at fault. */
  solo: boolean;
}

/** The items handed to one worker in one message: item `i` is item `index[i]` of `calls[i]`. */
interface Chunk {
  calls: Call[];
  index: number[];
  /** One byte per item in shared memory: 1 = skip it (its call was cancelled). */
  skip: Uint8Array;
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
  /** Waiting items, oldest first; `head` is the first span still in use (spans before it are spent). */
  private queue: Span[] = [];
  private head = 0;
  /** Items waiting in the queue. */
  private queued = 0;
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
    const [r] = await this.submit(REWARD, [completion], [gold], this.optionsKey(options), call.signal);
    return asReward(r as Raw);
  }

  /** `verifyAnswer` in a worker; `{ equal: false, reason: "timeout" }` when it runs past the budget. */
  async verify(gold: string, pred: string, options?: VerifyOptionsInput, call: PoolCallOptions = {}): Promise<VerifyResult> {
    assertText(gold, 'gold');
    assertText(pred, 'pred');
    const [r] = await this.submit(VERIFY, [gold], [pred], this.optionsKey(options), call.signal);
    return asVerify(r as Raw);
  }

  /**
   * Rewards for parallel arrays, in order: one promise for the whole batch, its items sent to the workers in chunks.
   * Bad input (a non-string, arrays of different lengths) rejects before anything is queued.
   */
  async rewardBatch(
    completions: readonly string[],
    golds: readonly string[],
    options?: VerifyOptionsInput,
    call: PoolCallOptions = {},
  ): Promise<RewardResult[]> {
    checkBatch('rewardBatch', completions, golds);
    return (await this.submit(REWARD, completions, golds, this.optionsKey(options), call.signal)).map(asReward);
  }

  /** `verify` for parallel arrays of golds and predicted answers, in order, as `rewardBatch` does for rewards. */
  async verifyBatch(
    golds: readonly string[],
    preds: readonly string[],
    options?: VerifyOptionsInput,
    call: PoolCallOptions = {},
  ): Promise<VerifyResult[]> {
    checkBatch('verifyBatch', golds, preds, ['gold', 'pred']);
    return (await this.submit(VERIFY, golds, preds, this.optionsKey(options), call.signal)).map(asVerify);
  }

  /** Stops the workers; pending items are rejected with `pool_closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (let q = this.head; q < this.queue.length; q++) {
      const c = (this.queue[q] as Span).call;
      if (!c.done) c.reject(closedError());
    }
    this.queue = [];
    this.head = 0;
    this.queued = 0;
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
  private submit(
    kind: number,
    a: readonly string[],
    b: readonly string[],
    options: string,
    signal: AbortSignal | undefined,
  ): Promise<Raw[]> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (a.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (call.done) return;
        this.cancel(call);
        call.reject(signal?.reason);
      };
      const settle = (): void => {
        call.done = true;
        signal?.removeEventListener('abort', onAbort);
      };
      const call: Call = {
        kind,
        a,
        b,
        options,
        results: new Array(a.length),
        left: a.length,
        done: false,
        chunks: new Set(),
        resolve: (r) => {
          settle();
          resolve(r);
        },
        reject: (e) => {
          if (call.done) return;
          settle();
          reject(e);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push({ call, from: 0, to: a.length, solo: false });
      this.queued += a.length;
      // Let a synchronous burst of submissions (several calls) queue up before chunking them.
      if (!this.pumpScheduled) {
        this.pumpScheduled = true;
        queueMicrotask(() => {
          this.pumpScheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Answers item `i` of `call`; the call resolves when its last item is answered. */
  private answer(call: Call, i: number, r: Raw): void {
    if (call.done || call.results[i] !== undefined) return;
    call.results[i] = r;
    if (--call.left === 0) call.resolve(call.results as Raw[]);
  }

  /**
   * Takes a cancelled call's items out of the queue at once; those already in a worker are skipped if not started.
   * Its items not answered yet are counted as cancelled (answered ones stay counted as completed).
   */
  private cancel(call: Call): void {
    this.counters.cancelled += call.left;
    for (const chunk of call.chunks) for (let i = 0; i < chunk.calls.length; i++) if (chunk.calls[i] === call) chunk.skip[i] = 1;
    let removed = 0;
    const kept: Span[] = [];
    for (let q = this.head; q < this.queue.length; q++) {
      const span = this.queue[q] as Span;
      if (span.call === call) removed += span.to - span.from;
      else kept.push(span);
    }
    if (removed > 0) {
      this.queue = kept;
      this.head = 0;
      this.queued -= removed;
    }
  }

  /** Takes up to `size` waiting items from the front of the queue, skipping calls that are already settled. */
  private take(size: number): Chunk {
    const chunk: Chunk = { calls: [], index: [], skip: new Uint8Array(0) };
    while (chunk.calls.length < size && this.head < this.queue.length) {
      const span = this.queue[this.head] as Span;
      if (span.solo && chunk.calls.length > 0) break;
      const n = span.solo ? 1 : Math.min(size - chunk.calls.length, span.to - span.from);
      if (!span.call.done)
        for (let i = span.from; i < span.from + n; i++) {
          chunk.calls.push(span.call);
          chunk.index.push(i);
        }
      span.from += n;
      this.queued -= n;
      if (span.from === span.to) this.head++;
      if (span.solo && chunk.calls.length > 0) break;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    return chunk;
  }

  /** Puts items back at the front of the queue, in their order (one span per run of consecutive items of a call). */
  private requeue(calls: Call[], index: number[], solo: boolean): void {
    const spans: Span[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as Call;
      const at = index[i] as number;
      const last = spans[spans.length - 1];
      if (last !== undefined && last.call === call && last.to === at) last.to++;
      else spans.push({ call, from: at, to: at + 1, solo });
    }
    this.queue = [...spans, ...this.queue.slice(this.head)];
    this.head = 0;
    this.queued += calls.length;
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.queued > 0 && !this.closed) {
      const size = Math.max(1, Math.min(this.chunkSize, Math.ceil(this.queued / this.concurrency)));
      const chunk = this.take(size);
      if (chunk.calls.length === 0) continue;
      this.inFlight++;
      this.runChunk(chunk).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /**
   * Runs a chunk of items in one worker. The worker writes the start time and index of the item it is on into
   * shared memory; the timer checks that item's own budget. When an item overruns (or the worker dies), that item
   * is answered and the other items of the chunk (their results died with the worker) go back to the front of the
   * queue. Shared memory also carries one skip flag per item, set when the item's call is cancelled.
   */
  private async runChunk(chunk: Chunk): Promise<void> {
    const { calls, index } = chunk;
    const n = calls.length;
    const ac = new AbortController();
    const shared = new SharedArrayBuffer(16 + n);
    const progress = new Float64Array(shared, 0, 2);
    chunk.skip = new Uint8Array(shared, 16, n);
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
    const kinds = new Uint8Array(n);
    const o = new Uint16Array(n);
    const a: string[] = new Array(n);
    const b: string[] = new Array(n);
    const options: string[] = [];
    for (let i = 0; i < n; i++) {
      const call = calls[i] as Call;
      const at = index[i] as number;
      call.chunks.add(chunk);
      kinds[i] = call.kind;
      a[i] = call.a[at] as string;
      b[i] = call.b[at] as string;
      let k = options.indexOf(call.options);
      if (k < 0) k = options.push(call.options) - 1;
      o[i] = k;
    }
    const task: WorkerTask = { kinds, a, b, o, options, progress: shared };
    try {
      const packed = (await this.piscina.run(task, { signal: ac.signal })) as PackedResults;
      for (let i = 0; i < n; i++) {
        const call = calls[i] as Call;
        const r = unpackResult(packed, call.kind, i);
        if (call.done || r === null) continue;
        this.counters.completed++;
        this.answer(call, index[i] as number, r);
      }
    } catch (e) {
      if (this.closed) {
        for (const call of calls) call.reject(closedError(e));
        return;
      }
      const started = progress[0] !== 0;
      if (!started && !ac.signal.aborted && n > 1) {
        // The worker died before its first item (while starting, or reading the message): no item is known to be at
        // fault, so each is run again alone, and only an item that kills a worker by itself is answered as failed.
        const live = calls.map((c) => !c.done);
        this.requeue(
          calls.filter((_c, i) => live[i]),
          index.filter((_x, i) => live[i]),
          true,
        );
        return;
      }
      const at = started ? (progress[1] as number) : 0;
      const stuck = calls[at] as Call;
      if (!stuck.done) {
        if (ac.signal.aborted) {
          this.counters.timedOut++;
          this.answer(stuck, index[at] as number, { equal: false, reason: 'timeout', gold: null, pred: null });
        } else {
          // The worker died (out of memory, a crash): the item is answered, the pool carries on.
          this.counters.failed++;
          const reason = `worker_failed: ${e instanceof Error ? e.message : String(e)}`;
          this.answer(stuck, index[at] as number, { equal: false, reason, gold: null, pred: null });
        }
      }
      // The other items of the chunk (done or not; their results died with the worker) are run again.
      const keep = calls.map((c, i) => i !== at && !c.done);
      this.requeue(
        calls.filter((_c, i) => keep[i]),
        index.filter((_x, i) => keep[i]),
        false,
      );
    } finally {
      clearTimeout(timer);
      for (const call of calls) call.chunks.delete(chunk);
    }
  }
}
