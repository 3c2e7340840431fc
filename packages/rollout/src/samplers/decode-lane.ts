/**
 * The row side of a decode batch: which `DecodeRow` sits in which slot of the cache, the rows
 * waiting to join, and the host work of a step: picking every live row's token from the last
 * logits, collecting the rows that ended, and planning the next `CacheStep` (host data only). The
 * in-process `DecodeBatch` runs one lane next to its `DecodeCache`; `WorkerDecodeExecutor` runs one
 * per policy worker, whose `DecodeCache` lives in the worker.
 */
import type { CacheStep } from './decode-cache.js';
import type { DecodeRow } from './decode-row.js';

export class DecodeLane {
  private readonly padTokenId: number;
  /** rows in cache order; a finished row keeps its slot until the cache is compacted */
  private slots: DecodeRow[] = [];
  private joining: DecodeRow[] = [];
  /** cancelled rows already handed back by `collect` (they keep their slot until a compaction) */
  private readonly reported = new WeakSet<DecodeRow>();

  constructor(padTokenId: number) {
    this.padTokenId = padTokenId;
  }

  /** rows admitted and not yet handed back by `collect` */
  get size(): number {
    return this.slots.filter((r) => !r.done).length + this.joining.length;
  }

  /** no live slot and no row waiting to join: the cache can go */
  get idle(): boolean {
    return this.joining.length === 0 && this.slots.every((r) => r.done);
  }

  admit(rows: readonly DecodeRow[]): void {
    this.joining.push(...rows);
  }

  /**
   * Pick the next token of every live slot from `logits` (`[slots, V]` of the last step, null when
   * there was none) and return the rows that ended or were cancelled since, each once.
   */
  collect(logits: Float32Array | null, V: number): DecodeRow[] {
    const ended: DecodeRow[] = [];
    if (logits !== null) {
      this.slots.forEach((row, s) => {
        if (row.done) return;
        row.choose(logits.subarray(s * V, (s + 1) * V));
        if (row.done) ended.push(row);
      });
    }
    // rows cancelled while waiting to join never run
    ended.push(...this.joining.filter((r) => r.done));
    this.joining = this.joining.filter((r) => !r.done);
    for (const row of this.slots) if (row.cancelled && !this.reported.has(row) && !ended.includes(row)) ended.push(row);
    for (const row of ended) this.reported.add(row);
    return ended;
  }

  /**
   * The next step of the cache (not `idle`): the finished slots are dropped when rows join or when
   * at most half the slots are live, the live ones feed their last token, the joining rows follow.
   */
  plan(): CacheStep {
    const live = this.slots.filter((r) => !r.done).length;
    let keep: number[] | null = null;
    if (live === 0) this.slots = [];
    else if (live < this.slots.length && (this.joining.length > 0 || live <= this.slots.length / 2)) {
      keep = this.slots.flatMap((r, s) => (r.done ? [] : [s]));
      this.slots = keep.map((s) => this.slots[s]!);
    }
    const ids = Int32Array.from(this.slots, (r) => (r.done ? this.padTokenId : r.tokens.at(-1)!));
    const mask = Float32Array.from(this.slots, (r) => (r.done ? 0 : 1));
    const joining = this.joining;
    this.joining = [];
    this.slots = [...this.slots, ...joining];
    return { keep, ids, mask, joining: joining.map((r) => r.prompt) };
  }

  /** The recompute twin's step: every live row's whole sequence (prompt and tokens), the joining rows last. */
  sequences(): number[][] {
    this.slots = [...this.slots.filter((r) => !r.done), ...this.joining];
    this.joining = [];
    return this.slots.map((r) => [...r.prompt, ...r.tokens]);
  }

  /** Forget the slots (the cache was dropped). */
  reset(): void {
    this.slots = [];
  }

  /** Cancel every row in the lane and forget them. */
  dispose(): void {
    for (const r of [...this.slots, ...this.joining]) if (!r.done) r.cancelled = true;
    this.joining = [];
    this.slots = [];
  }
}
