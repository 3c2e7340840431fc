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
 *
 * The rows' side of a step is a `DecodeLane` (host work only), the tensors' a `DecodeCache`: the
 * same two pieces that `WorkerDecodeExecutor` runs with the cache in a policy worker.
 */
import { setImmediate } from 'node:timers/promises';
import type * as tf from '@tensorflow/tfjs-core';
import type { Qwen3Model } from '@rlvr/policy';
import { DecodeCache, fullLogits } from './decode-cache.js';
import { DecodeLane } from './decode-lane.js';
import type { DecodeRow } from './decode-row.js';

/**
 * What the request queue drives: a set of rows decoded together. The queue admits rows while
 * `size < capacity` and calls `step()` while `size > 0`; `WorkerDecodeExecutor` implements the same
 * interface with one batch per policy worker.
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

export class DecodeBatch implements DecodeExecutor {
  readonly capacity: number;
  private readonly model: Qwen3Model;
  private readonly o: DecodeBatchOptions;
  private readonly lane: DecodeLane;
  private readonly cache: DecodeCache;
  /** `[slots, V]` next-token logits of every slot, from the last forward pass */
  private logits: tf.Tensor2D | null = null;

  constructor(model: Qwen3Model, options: DecodeBatchOptions) {
    this.model = model;
    this.o = options;
    this.capacity = options.capacity;
    this.lane = new DecodeLane(options.padTokenId);
    this.cache = new DecodeCache(model, options.padTokenId);
  }

  get size(): number {
    return this.lane.size;
  }

  admit(rows: readonly DecodeRow[]): void {
    this.lane.admit(rows);
  }

  async step(): Promise<DecodeRow[]> {
    let host: Float32Array | null = null;
    if (this.logits !== null) {
      host = (await this.logits.data()) as Float32Array;
      this.logits.dispose();
      this.logits = null;
      // data() resolves as a microtask on the cpu and wasm backends: yield a macrotask so that
      // I/O (a server's other requests, a client's disconnect) and abort signals get through
      await setImmediate();
    }
    const ended = this.lane.collect(host, this.model.dims.V);
    if (this.lane.idle) {
      this.reset();
      return ended;
    }
    this.logits = this.o.kvCache ? this.cache.forward(this.lane.plan()) : fullLogits(this.model, this.lane.sequences(), this.o.padTokenId);
    return ended;
  }

  private reset(): void {
    this.cache.reset();
    this.logits?.dispose();
    this.logits = null;
    this.lane.reset();
  }

  dispose(): void {
    this.lane.dispose();
    this.reset();
  }
}
