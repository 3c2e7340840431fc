/**
 * The running decode batch of a `Qwen3Model`: rows join it between steps (continuous batching)
 * and leave it when they end. One `step()` picks one token for every live row and runs one
 * forward pass: a `decodeStep` over the KV cache for the rows already in it, and a `prefill` of
 * the rows that joined, whose cache is merged in (left-padded to the same length: a padded key is
 * masked, and positions count only real keys, so a row's logits do not depend on its neighbours).
 *
 * Memory: the cache is `rows x S` keys and values per layer, S the longest live row's context plus
 * the padding in front of the others; padding no live row needs is cut off, and finished rows are
 * dropped when rows join or when at most half the rows are live. Every tfjs call is inside
 * `tf.tidy` or disposed explicitly (tested: nothing leaks, also when rows are cancelled).
 */
import { setImmediate } from 'node:timers/promises';
import * as tf from '@tensorflow/tfjs-core';
import type { KVCache, Qwen3Model } from '@rlvr/policy';
import type { DecodeRow } from './decode-row.js';

/**
 * What the request queue drives: a set of rows decoded together. The queue admits rows while
 * `size < capacity` and calls `step()` while `size > 0`; a data-parallel engine implements the same
 * interface with one batch per worker thread.
 */
export interface DecodeExecutor {
  /** rows decoded together at most */
  readonly capacity: number;
  /** rows admitted and not yet reported back by `step()` */
  readonly size: number;
  /** Rows that join at the next `step()`. */
  admit(rows: readonly DecodeRow[]): void;
  /** One token for every live row; resolves to the rows that ended (or were cancelled), which leave the batch. */
  step(): Promise<DecodeRow[]>;
  /** Free everything; rows still in it are dropped. */
  dispose(): void;
}

export interface DecodeBatchOptions {
  capacity: number;
  /** the id fed where a row has no token (masked out) */
  padTokenId: number;
  /** false: recompute the full forward pass for every new token (the slow, obviously-correct twin) */
  kvCache: boolean;
}

/** Padding columns of the cache that no live row needs are cut once there are this many. */
const TRIM_AT = 32;

export class DecodeBatch implements DecodeExecutor {
  readonly capacity: number;
  private readonly model: Qwen3Model;
  private readonly o: DecodeBatchOptions;
  /** rows in cache order; a finished row keeps its slot until the cache is compacted */
  private slots: DecodeRow[] = [];
  /** per slot, the cache columns before its first real key */
  private pads: number[] = [];
  private joining: DecodeRow[] = [];
  /** cancelled rows already handed back by `step()` (they keep their slot until a compaction) */
  private reported = new WeakSet<DecodeRow>();
  private cache: KVCache | null = null;
  /** `[slots, V]` next-token logits of every slot, from the last forward pass */
  private logits: tf.Tensor2D | null = null;

  constructor(model: Qwen3Model, options: DecodeBatchOptions) {
    this.model = model;
    this.o = options;
    this.capacity = options.capacity;
  }

  get size(): number {
    return this.slots.filter((r) => !r.done).length + this.joining.length;
  }

  admit(rows: readonly DecodeRow[]): void {
    this.joining.push(...rows);
  }

  async step(): Promise<DecodeRow[]> {
    const V = this.model.dims.V;
    const ended: DecodeRow[] = [];
    if (this.logits !== null) {
      const host = (await this.logits.data()) as Float32Array;
      this.logits.dispose();
      this.logits = null;
      // data() resolves as a microtask on the cpu and wasm backends: yield a macrotask so that
      // I/O (a server's other requests, a client's disconnect) and abort signals get through
      await setImmediate();
      this.slots.forEach((row, s) => {
        if (row.done) return;
        row.choose(host.subarray(s * V, (s + 1) * V));
        if (row.done) ended.push(row);
      });
    }
    // rows cancelled while waiting to join never run
    ended.push(...this.joining.filter((r) => r.done));
    this.joining = this.joining.filter((r) => !r.done);
    for (const row of this.slots) if (row.cancelled && !this.reported.has(row) && !ended.includes(row)) ended.push(row);
    for (const row of ended) this.reported.add(row);
    const live = this.slots.filter((r) => !r.done).length;
    if (live === 0 && this.joining.length === 0) {
      this.reset();
      return ended;
    }
    if (this.o.kvCache) this.forwardCached(live);
    else this.forwardFull();
    return ended;
  }

  /** One decode step for the live rows, then a prefill of the joining rows merged into the cache. */
  private forwardCached(live: number): void {
    let logits: tf.Tensor2D | null = null;
    if (live > 0) {
      if (live < this.slots.length && (this.joining.length > 0 || live <= this.slots.length / 2)) this.compact();
      const ids = Int32Array.from(this.slots, (r) => (r.done ? this.o.padTokenId : r.tokens.at(-1)!));
      const mask = Float32Array.from(this.slots, (r) => (r.done ? 0 : 1));
      const cache = this.cache!;
      logits = tf.tidy(() => this.model.decodeStep(cache, tf.tensor1d(ids, 'int32'), tf.tensor1d(mask, 'float32')));
    } else if (this.cache !== null) {
      this.cache.dispose();
      this.cache = null;
      this.slots = [];
      this.pads = [];
    }
    if (this.joining.length > 0) logits = this.join(logits);
    this.logits = logits;
    this.trim();
  }

  /** Prefill the joining rows and merge their cache and logits after the live ones. */
  private join(liveLogits: tf.Tensor2D | null): tf.Tensor2D {
    const rows = this.joining;
    this.joining = [];
    const B = rows.length;
    const P = Math.max(...rows.map((r) => r.prompt.length));
    const ids = new Int32Array(B * P).fill(this.o.padTokenId);
    const mask = new Int32Array(B * P);
    rows.forEach((r, b) => {
      ids.set(r.prompt, b * P + P - r.prompt.length);
      mask.fill(1, b * P + P - r.prompt.length, (b + 1) * P);
    });
    const pIds = tf.tensor2d(ids, [B, P], 'int32');
    const pMask = tf.tensor2d(mask, [B, P], 'int32');
    let fresh: { logits: tf.Tensor2D; cache: KVCache };
    try {
      fresh = this.model.prefill(pIds, pMask);
    } finally {
      tf.dispose([pIds, pMask]);
    }
    const freshPads = rows.map((r) => P - r.prompt.length);
    if (this.cache === null || liveLogits === null) {
      this.cache?.dispose();
      this.cache = fresh.cache;
      this.slots = rows;
      this.pads = freshPads;
      return fresh.logits;
    }
    const old = this.cache;
    const oldLen = old.length;
    const S = Math.max(oldLen, P);
    const padKeys = (t: tf.Tensor4D, by: number): tf.Tensor4D =>
      by === 0
        ? t
        : (tf.pad(t, [
            [0, 0],
            [0, 0],
            [by, 0],
            [0, 0],
          ]) as tf.Tensor4D);
    const padMask = (t: tf.Tensor2D, by: number): tf.Tensor2D =>
      by === 0
        ? t
        : (tf.pad(t, [
            [0, 0],
            [by, 0],
          ]) as tf.Tensor2D);
    const merged = tf.tidy(() => ({
      layers: old.layers.map((l, i) => {
        const f = fresh.cache.layers[i]!;
        return {
          k: tf.concat([padKeys(l.k, S - oldLen), padKeys(f.k, S - P)], 0) as tf.Tensor4D,
          v: tf.concat([padKeys(l.v, S - oldLen), padKeys(f.v, S - P)], 0) as tf.Tensor4D,
        };
      }),
      keyMask: tf.concat([padMask(old.keyMask, S - oldLen), padMask(fresh.cache.keyMask, S - P)], 0) as tf.Tensor2D,
      logits: tf.concat([liveLogits, fresh.logits], 0) as tf.Tensor2D,
    }));
    for (const l of old.layers) tf.dispose([l.k, l.v]);
    old.keyMask.dispose();
    fresh.cache.dispose();
    tf.dispose([liveLogits, fresh.logits]);
    old.layers = merged.layers;
    old.keyMask = merged.keyMask;
    this.pads = [...this.pads.map((p) => p + S - oldLen), ...freshPads.map((p) => p + S - P)];
    this.slots = [...this.slots, ...rows];
    return merged.logits;
  }

  /** Keep only the live slots: keys, values `[B, KV, S, hd]` and the key mask `[B, S]`. */
  private compact(): void {
    const keep = this.slots.flatMap((r, s) => (r.done ? [] : [s]));
    const cache = this.cache!;
    const idx = tf.tensor1d(keep, 'int32');
    const old = cache.layers;
    const oldMask = cache.keyMask;
    cache.layers = old.map((l) => ({ k: tf.gather(l.k, idx) as tf.Tensor4D, v: tf.gather(l.v, idx) as tf.Tensor4D }));
    cache.keyMask = tf.gather(oldMask, idx) as tf.Tensor2D;
    for (const l of old) tf.dispose([l.k, l.v]);
    tf.dispose([oldMask, idx]);
    this.slots = keep.map((s) => this.slots[s]!);
    this.pads = keep.map((s) => this.pads[s]!);
  }

  /** Cut the cache columns in front of every live row's first real key. */
  private trim(): void {
    const cache = this.cache;
    if (cache === null) return;
    const cut = Math.min(...this.slots.flatMap((r, s) => (r.done ? [] : [this.pads[s]!])));
    if (!Number.isFinite(cut) || cut < TRIM_AT) return;
    const S = cache.length;
    const old = cache.layers;
    const oldMask = cache.keyMask;
    cache.layers = old.map((l) => ({
      k: tf.slice(l.k, [0, 0, cut, 0], [-1, -1, S - cut, -1]) as tf.Tensor4D,
      v: tf.slice(l.v, [0, 0, cut, 0], [-1, -1, S - cut, -1]) as tf.Tensor4D,
    }));
    cache.keyMask = tf.slice(oldMask, [0, cut], [-1, S - cut]) as tf.Tensor2D;
    for (const l of old) tf.dispose([l.k, l.v]);
    oldMask.dispose();
    this.pads = this.pads.map((p) => Math.max(0, p - cut));
  }

  /** The recompute twin: the last-column logits of a full forward pass over every live row's sequence. */
  private forwardFull(): void {
    this.slots = [...this.slots.filter((r) => !r.done), ...this.joining];
    this.joining = [];
    const rows = this.slots;
    const B = rows.length;
    const L = Math.max(...rows.map((r) => r.prompt.length + r.tokens.length));
    const ids = new Int32Array(B * L).fill(this.o.padTokenId);
    const mask = new Int32Array(B * L);
    rows.forEach((r, b) => {
      const seq = [...r.prompt, ...r.tokens];
      ids.set(seq, b * L + L - seq.length);
      mask.fill(1, b * L + L - seq.length, (b + 1) * L);
    });
    const { D, V } = this.model.dims;
    this.logits = tf.tidy(() => {
      const h = this.model.hidden({ ids: tf.tensor2d(ids, [B, L], 'int32'), attentionMask: tf.tensor2d(mask, [B, L], 'int32') });
      const last = tf.slice(h, [0, L - 1, 0], [B, 1, D]) as tf.Tensor3D;
      return tf.reshape(this.model.project(last), [B, V]) as tf.Tensor2D;
    });
  }

  private reset(): void {
    this.cache?.dispose();
    this.cache = null;
    this.logits?.dispose();
    this.logits = null;
    this.slots = [];
    this.pads = [];
  }

  dispose(): void {
    for (const r of [...this.slots, ...this.joining]) if (!r.done) r.cancelled = true;
    this.joining = [];
    this.reset();
  }
}
