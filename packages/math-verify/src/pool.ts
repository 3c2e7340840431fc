/**
 * A pool of worker threads that run the verifier with a hard wall-clock budget per item. An item that runs past
 * `timeoutMs` has its worker terminated and answers `{ equal: false, reason: "timeout" }`; the pool starts a fresh
 * worker and carries on, and the other items that worker held are run again. Items go to workers in chunks: one
 * message each way per chunk, items and results packed in parallel arrays, one promise per call (a batch is one
 * call), so the main thread's cost per item stays small next to grading a cheap answer. Each worker holds up to two
 * chunks, so it starts the next as soon as it finishes one instead of waiting for the main thread; items a busy worker
 * has not reached are handed to a worker that runs out of work (per-item states in shared memory make that race-free),
 * so a slow item holds up no item but itself. Each item's budget starts when a worker reaches it, so neither queueing
 * nor a worker's start-up counts.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { MathVerifyError, assertText } from './errors.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';
import { checkBatch } from './verify.js';
import type { RewardResult, VerifyResult } from './grade.js';
import {
  ITEM_PENDING,
  ITEM_WITHDRAWN,
  P_DONE,
  P_INDEX,
  P_SEQ,
  P_START,
  PROGRESS_WORDS,
  type PackedResults,
  REWARD,
  VERIFY,
  type WorkerTask,
  unpackResult,
} from './worker.js';

/** JSON of each resolved options object, computed once (options are sent to workers as strings). */
const optionKeys = new WeakMap<object, string>();

/** Longest a worker may go without starting an item while it holds some (a start-up that never ends). */
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
  /** Chunks in workers that hold items of this call, so that a cancellation can withdraw the items not reached. */
  chunks: Set<Chunk>;
}

/** Items `from` to `to` (exclusive) of a call, waiting in the queue. */
interface Span {
  call: Call;
  from: number;
  to: number;
  /** Each item goes to a worker alone: its worker died before starting any item, so none is known to be at fault. */
  solo: boolean;
}

/** The items handed to one worker in one message: item `i` is item `index[i]` of `calls[i]`. */
interface Chunk {
  seq: number;
  calls: Call[];
  index: number[];
  /** One byte per item in shared memory (`ITEM_*` of worker.ts): pending, withdrawn by the pool, taken by the worker. */
  state: Uint8Array;
}

/** One worker thread and the chunks it holds. */
interface Slot {
  worker: Worker;
  /** The thread's progress words (`P_*` of worker.ts). */
  progress: Float64Array;
  /** Chunks sent and not answered, oldest first: the worker runs them in this order. */
  chunks: Chunk[];
  /** When the worker was last given work while idle, or last answered a chunk. */
  since: number;
  timer: NodeJS.Timeout | undefined;
  /** Retired (timed out, dead, or closed): its messages and its exit are ignored. */
  gone: boolean;
}

/** Chunks a worker holds at once: it starts the next one while the main thread is still unpacking the last. */
const DEPTH = 2;

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
const timeoutResult = (): Raw => ({ equal: false, reason: 'timeout', gold: null, pred: null });

export class VerifierPool {
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly chunkSize: number;
  private readonly workerMemoryMb: number;
  private readonly defaultOptions: string;
  /** One per worker; empty where a worker died before finishing anything, until work needs it (no respawn loop). */
  private readonly slots: (Slot | undefined)[] = [];
  private seq = 0;
  /** Waiting items, oldest first; `head` is the first span still in use (spans before it are spent). */
  private queue: Span[] = [];
  private head = 0;
  /** Items waiting in the queue. */
  private queued = 0;
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
    this.workerMemoryMb = r.data.workerMemoryMb;
    this.defaultOptions = JSON.stringify(resolveOptions(r.data.verify as VerifyOptionsInput));
    for (let i = 0; i < this.concurrency; i++) this.slots.push(this.spawn());
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

  /** Stops the workers; pending items (queued or in a worker) are rejected with `pool_closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = closedError();
    for (let q = this.head; q < this.queue.length; q++) (this.queue[q] as Span).call.reject(error);
    this.queue = [];
    this.head = 0;
    this.queued = 0;
    const stopping: Promise<number>[] = [];
    for (const slot of this.slots) {
      if (slot === undefined) continue;
      slot.gone = true;
      clearTimeout(slot.timer);
      for (const chunk of slot.chunks) for (const call of chunk.calls) call.reject(error);
      slot.chunks = [];
      stopping.push(slot.worker.terminate());
    }
    await Promise.all(stopping);
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
   * Takes a cancelled call's items out of the queue at once, and withdraws those a worker holds but has not reached.
   * Its items not answered yet are counted as cancelled (answered ones stay counted as completed).
   */
  private cancel(call: Call): void {
    this.counters.cancelled += call.left;
    for (const chunk of call.chunks)
      for (let i = 0; i < chunk.calls.length; i++)
        if (chunk.calls[i] === call) Atomics.compareExchange(chunk.state, i, ITEM_PENDING, ITEM_WITHDRAWN);
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
    const chunk: Chunk = { seq: 0, calls: [], index: [], state: new Uint8Array(0) };
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
  private requeue(items: readonly { call: Call; at: number; solo: boolean }[]): void {
    const spans: Span[] = [];
    for (const { call, at, solo } of items) {
      const last = spans[spans.length - 1];
      if (last !== undefined && last.call === call && last.to === at && last.solo === solo) last.to++;
      else spans.push({ call, from: at, to: at + 1, solo });
    }
    this.queue = [...spans, ...this.queue.slice(this.head)];
    this.head = 0;
    this.queued += items.length;
  }

  /** Hands queued items to the workers holding the fewest chunks (up to `DEPTH` each). */
  private pump(): void {
    while (!this.closed && (this.queued > 0 || this.steal())) {
      let k = -1;
      const held = (j: number): number => this.slots[j]?.chunks.length ?? 0;
      for (let j = 0; j < this.concurrency; j++) if (held(j) < DEPTH && (k < 0 || held(j) < held(k))) k = j;
      if (k < 0) return;
      const slot = this.slots[k] ?? this.spawn();
      this.slots[k] = slot;
      const chunk = this.take(Math.max(1, Math.min(this.chunkSize, Math.ceil(this.queued / this.concurrency))));
      if (chunk.calls.length > 0) this.send(slot, chunk);
    }
  }

  /**
   * With the queue empty and a worker idle: withdraws the later half of the items the busiest worker holds but has
   * not reached, and queues them again, so that a slow item holds up only itself. Whether the idle worker or the
   * busy one gets an item is settled by `Atomics.compareExchange` on its state: never both.
   */
  private steal(): boolean {
    if (!this.slots.some((s) => s === undefined || s.chunks.length === 0)) return false;
    const pending = (s: Slot): number => {
      let n = 0;
      for (const chunk of s.chunks)
        for (let i = 0; i < chunk.calls.length; i++) if (chunk.state[i] === ITEM_PENDING && !(chunk.calls[i] as Call).done) n++;
      return n;
    };
    let from: Slot | undefined;
    let most = 0;
    for (const s of this.slots) {
      const n = s !== undefined && s.chunks.length > 0 ? pending(s) : 0;
      if (n > most) [from, most] = [s, n];
    }
    if (from === undefined) return false;
    const items: { call: Call; at: number; solo: boolean }[] = [];
    let want = Math.ceil(most / 2);
    for (let c = from.chunks.length - 1; c >= 0 && want > 0; c--) {
      const chunk = from.chunks[c] as Chunk;
      for (let i = chunk.calls.length - 1; i >= 0 && want > 0; i--) {
        const call = chunk.calls[i] as Call;
        if (call.done || Atomics.compareExchange(chunk.state, i, ITEM_PENDING, ITEM_WITHDRAWN) !== ITEM_PENDING) continue;
        items.push({ call, at: chunk.index[i] as number, solo: false });
        want--;
      }
    }
    this.requeue(items.reverse());
    return items.length > 0;
  }

  /** A worker thread, started at once and unreferenced while idle (an idle pool never keeps the process alive). */
  private spawn(): Slot {
    const shared = new SharedArrayBuffer(PROGRESS_WORDS * Float64Array.BYTES_PER_ELEMENT);
    const worker = new Worker(new URL('./worker-thread.js', import.meta.url), {
      workerData: { progress: shared },
      // A worker inherits the process's flags; `--input-type` (a script given with -e or on stdin) makes Node refuse
      // to start a worker from a file.
      execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')),
      resourceLimits: { maxOldGenerationSizeMb: this.workerMemoryMb },
    });
    worker.unref();
    const slot: Slot = { worker, progress: new Float64Array(shared), chunks: [], since: 0, timer: undefined, gone: false };
    let error: unknown;
    worker.on('message', (m: { seq: number; packed: PackedResults }) => this.onResults(slot, m.seq, m.packed));
    worker.on('error', (e) => {
      error = e;
    });
    worker.on('exit', (code) => {
      if (!slot.gone) this.retire(slot, 'died', error ?? new Error(`the worker exited with code ${code}`));
    });
    return slot;
  }

  /** Sends a chunk to a worker; the worker's watchdog runs while it holds any. */
  private send(slot: Slot, chunk: Chunk): void {
    const n = chunk.calls.length;
    chunk.seq = ++this.seq;
    chunk.state = new Uint8Array(new SharedArrayBuffer(n));
    const kinds = new Uint8Array(n);
    const o = new Uint16Array(n);
    const a: string[] = new Array(n);
    const b: string[] = new Array(n);
    const options: string[] = [];
    let last: Call | undefined;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const call = chunk.calls[i] as Call;
      const at = chunk.index[i] as number;
      if (call !== last) {
        last = call;
        call.chunks.add(chunk);
        k = options.indexOf(call.options);
        if (k < 0) k = options.push(call.options) - 1;
      }
      kinds[i] = call.kind;
      a[i] = call.a[at] as string;
      b[i] = call.b[at] as string;
      o[i] = k;
    }
    if (slot.chunks.length === 0) {
      slot.since = Date.now();
      slot.worker.ref();
      this.watch(slot, this.timeoutMs);
    }
    slot.chunks.push(chunk);
    const task: WorkerTask = { seq: chunk.seq, kinds, a, b, o, options, state: chunk.state.buffer as SharedArrayBuffer };
    slot.worker.postMessage(task);
  }

  private watch(slot: Slot, ms: number): void {
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => this.check(slot), Math.max(1, ms));
  }

  /**
   * The watchdog: the item the worker is on gets `timeoutMs` from its own start; a worker that holds chunks but
   * starts no item for `STARTUP_LIMIT_MS` more (a start-up that never ends) is stopped too.
   */
  private check(slot: Slot): void {
    if (slot.gone || slot.chunks.length === 0) return;
    const now = Date.now();
    const p = slot.progress;
    const start = p[P_START] as number;
    if (start > 0 && now - start >= this.timeoutMs) this.retire(slot, 'timeout', undefined, [p[P_SEQ] as number, p[P_INDEX] as number]);
    else if (start === 0 && now - slot.since > STARTUP_LIMIT_MS + this.timeoutMs) this.retire(slot, 'stalled');
    else this.watch(slot, start > 0 ? start + this.timeoutMs - now : this.timeoutMs);
  }

  /** A chunk's results: answers its items (the withdrawn ones were queued again or cancelled), then refills the worker. */
  private onResults(slot: Slot, seq: number, packed: PackedResults): void {
    if (slot.gone) return;
    const k = slot.chunks.findIndex((c) => c.seq === seq);
    if (k < 0) return;
    const [chunk] = slot.chunks.splice(k, 1) as [Chunk];
    slot.since = Date.now();
    if (slot.chunks.length === 0) {
      clearTimeout(slot.timer);
      slot.timer = undefined;
      slot.worker.unref();
    }
    for (let i = 0; i < chunk.calls.length; i++) {
      const call = chunk.calls[i] as Call;
      if (i === 0 || call !== chunk.calls[i - 1]) call.chunks.delete(chunk);
      const r = unpackResult(packed, call.kind, i);
      if (call.done || r === null) continue;
      this.counters.completed++;
      this.answer(call, chunk.index[i] as number, r);
    }
    this.pump();
  }

  /**
   * Stops a worker that ran an item past its budget (`timeout`), started nothing for too long (`stalled`) or died,
   * answers the item at fault, queues the other items it held again, and starts a fresh worker. The item at fault is
   * the one it was on (`at`: chunk and index, read by the watchdog); a worker that died between items was reading
   * the chunk after the last it finished: a one-item chunk is at fault, a larger one's items are each run again alone.
   */
  private retire(slot: Slot, why: 'timeout' | 'stalled' | 'died', error?: unknown, at?: [number, number]): void {
    slot.gone = true;
    clearTimeout(slot.timer);
    if (why !== 'died') void slot.worker.terminate();
    const chunks = slot.chunks;
    slot.chunks = [];
    const p = slot.progress;
    if (at === undefined && why === 'died' && (p[P_START] as number) > 0) at = [p[P_SEQ] as number, p[P_INDEX] as number];
    // Between items: the chunk the worker was reading or about to start.
    const next = at === undefined ? chunks.find((c) => c.seq > (p[P_DONE] as number)) : undefined;
    const live = (chunk: Chunk, i: number): boolean => !(chunk.calls[i] as Call).done && chunk.state[i] !== ITEM_WITHDRAWN;
    if (next !== undefined && (why === 'stalled' || next.calls.length === 1)) {
      const i = next.calls.findIndex((_c, j) => live(next, j));
      if (i >= 0) at = [next.seq, i];
    }
    const items: { call: Call; at: number; solo: boolean }[] = [];
    for (const chunk of chunks)
      for (let i = 0; i < chunk.calls.length; i++) {
        const call = chunk.calls[i] as Call;
        call.chunks.delete(chunk);
        if (!live(chunk, i)) continue;
        const index = chunk.index[i] as number;
        const blamed = at !== undefined && chunk.seq === at[0] && i === at[1];
        if (!blamed) {
          items.push({ call, at: index, solo: chunk === next && at === undefined });
          continue;
        }
        if (why === 'died') {
          this.counters.failed++;
          const reason = `worker_failed: ${error instanceof Error ? error.message : String(error)}`;
          this.answer(call, index, { equal: false, reason, gold: null, pred: null });
        } else {
          this.counters.timedOut++;
          this.answer(call, index, timeoutResult());
        }
      }
    const k = this.slots.indexOf(slot);
    if (this.closed || k < 0) return;
    // A worker that died before finishing anything and held nothing (its start-up failed) is started again only when
    // work needs it: a process whose workers cannot start must not spin starting them.
    const startupDeath = why === 'died' && chunks.length === 0 && (p[P_DONE] as number) === 0;
    this.slots[k] = startupDeath ? undefined : this.spawn();
    if (items.length > 0) this.requeue(items);
    this.pump();
  }
}
