/**
 * The request queue in front of one or more decode batches (continuous batching): a request's
 * rows wait in arrival order and join a batch as soon as it has room, between two of its steps, so
 * concurrent requests share the running batch instead of waiting for each other. The queue owns
 * the loop that steps the batches; with several executors (the data-parallel workers of a later
 * engine) every step runs them side by side and rows go to the one with the most room.
 *
 * Scheduling depends only on the order of `submit` calls and on when rows end, never on timing
 * within a step: the same calls on an idle queue give the same batches, hence the same tokens.
 */
import { setImmediate } from 'node:timers/promises';
import type { DecodeExecutor } from './decode-batch.js';
import type { DecodeRow } from './decode-row.js';

interface Pending {
  rows: readonly DecodeRow[];
  left: number;
  started: boolean;
  resolve(rows: readonly DecodeRow[]): void;
  reject(e: unknown): void;
}

/** What the queue holds now (the server's `/metrics`). */
export interface QueueStats {
  /** requests with no row in a batch yet */
  waitingRequests: number;
  /** requests with a row in a batch */
  runningRequests: number;
  waitingRows: number;
  runningRows: number;
}

export class DecodeQueue {
  private readonly executors: readonly DecodeExecutor[];
  private readonly waiting: { row: DecodeRow; owner: Pending }[] = [];
  private readonly owners = new Map<DecodeRow, Pending>();
  private readonly requests = new Set<Pending>();
  private loop: Promise<void> | null = null;

  constructor(executors: readonly DecodeExecutor[]) {
    if (executors.length === 0) throw new Error('a decode queue needs an executor');
    this.executors = executors;
  }

  /**
   * Queue `rows` (one request: they join in order) and resolve to them once every one has ended.
   * When `signal` aborts, the rows still waiting are dropped, the running ones leave their batch at
   * its next step, and the promise rejects with the signal's reason.
   */
  submit(rows: readonly DecodeRow[], signal?: AbortSignal): Promise<readonly DecodeRow[]> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (rows.length === 0) return Promise.resolve(rows);
    return new Promise((resolve, reject) => {
      const owner: Pending = { rows, left: rows.length, started: false, resolve, reject };
      const onAbort = (): void => this.cancel(owner, signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle =
        <T>(fn: (v: T) => void) =>
        (v: T): void => {
          signal?.removeEventListener('abort', onAbort);
          this.requests.delete(owner);
          fn(v);
        };
      owner.resolve = settle(resolve);
      owner.reject = settle(reject);
      this.requests.add(owner);
      for (const row of rows) {
        this.waiting.push({ row, owner });
        this.owners.set(row, owner);
      }
      // `loop` is cleared by `run` itself, synchronously as it stops, so no submit can miss it
      this.loop ??= this.run();
    });
  }

  stats(): QueueStats {
    let waitingRequests = 0;
    for (const r of this.requests) if (!r.started) waitingRequests++;
    const runningRows = this.executors.reduce((n, e) => n + e.size, 0);
    return { waitingRequests, runningRequests: this.requests.size - waitingRequests, waitingRows: this.waiting.length, runningRows };
  }

  /** Resolves when nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.loop !== null) await this.loop;
  }

  private cancel(owner: Pending, reason: unknown): void {
    for (const row of owner.rows) {
      if (!row.done) row.cancelled = true;
      this.owners.delete(row);
    }
    for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i]!.owner === owner) this.waiting.splice(i, 1);
    owner.reject(reason);
  }

  private admit(): void {
    while (this.waiting.length > 0) {
      const ex = this.executors.reduce((a, b) => (b.capacity - b.size > a.capacity - a.size ? b : a));
      const room = ex.capacity - ex.size;
      if (room <= 0) return;
      const take = this.waiting.splice(0, room);
      for (const { owner } of take) owner.started = true;
      ex.admit(take.map((w) => w.row));
    }
  }

  private async run(): Promise<void> {
    await null; // let `submit` store this loop before it can end
    try {
      for (;;) {
        this.admit();
        const busy = this.executors.filter((e) => e.size > 0);
        if (busy.length === 0) {
          // idle: free the caches (rows cancelled since the last step leave with them)
          for (const ex of this.executors) ex.dispose();
          this.loop = null;
          return;
        }
        const ended = (await Promise.all(busy.map((e) => e.step()))).flat();
        for (const row of ended) {
          const owner = this.owners.get(row);
          if (owner === undefined) continue; // its request was cancelled
          this.owners.delete(row);
          if (--owner.left === 0) owner.resolve(owner.rows);
        }
        await setImmediate();
      }
    } catch (e) {
      // a failed forward pass fails every request in flight, and the batches start afresh
      for (const ex of this.executors) ex.dispose();
      this.waiting.length = 0;
      for (const owner of [...this.requests]) owner.reject(e);
      this.owners.clear();
      this.loop = null;
    }
  }
}
