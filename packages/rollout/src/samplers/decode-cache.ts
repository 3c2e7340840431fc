/**
 * The tensor side of a decode batch: the KV cache of its slots, fed by `CacheStep`s (host data:
 * token ids, masks, prompts) that the owner of the rows decides. The in-process `DecodeBatch`
 * and the policy workers' decode task (`workers/decode-task.ts`) run this same code; neither
 * sees a `DecodeRow`, so a step crosses to a worker thread as plain arrays.
 *
 * One step: compact the cache to the slots kept (if asked), a `decodeStep` over it for the slots
 * that decode, then a `prefill` of the joining prompts whose cache is merged in after the slots
 * (left-padded to the same length: a padded key is masked, and positions count only real keys, so
 * a row's logits do not depend on its neighbours); padding that no live slot needs is cut off.
 * Every tfjs call is inside `tf.tidy` or disposed explicitly.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { KVCache, Qwen3Model } from '@rlvr/policy';

/** One step of a `DecodeCache`, as decided by the owner of its rows (see `DecodeLane.plan`). */
export interface CacheStep {
  /** the slots kept, in order (a compaction), or null: every slot stays */
  keep: number[] | null;
  /**
   * per slot (after `keep`): the token fed, the last token of a live row or the pad id of a
   * finished one; empty when no slot is live (the cache is dropped: the joining rows start a new one)
   */
  ids: Int32Array;
  /** per slot: 1 live, 0 finished (its new key is masked) */
  mask: Float32Array;
  /** prompts of the rows that join after the slots */
  joining: readonly (readonly number[])[];
}

/** Padding columns of the cache that no live row needs are cut once there are this many. */
const TRIM_AT = 32;

export class DecodeCache {
  private readonly model: Qwen3Model;
  private readonly padTokenId: number;
  private cache: KVCache | null = null;
  /** per slot, the cache columns before its first real key */
  private pads: number[] = [];

  constructor(model: Qwen3Model, padTokenId: number) {
    this.model = model;
    this.padTokenId = padTokenId;
  }

  /** Run one step; returns the `[slots, V]` next-token logits of the slots after it (the caller disposes them). */
  forward(step: CacheStep): tf.Tensor2D {
    let logits: tf.Tensor2D | null = null;
    if (step.ids.length > 0) {
      if (step.keep !== null) this.compact(step.keep);
      const cache = this.cache!;
      logits = tf.tidy(() => this.model.decodeStep(cache, tf.tensor1d(step.ids, 'int32'), tf.tensor1d(step.mask, 'float32')));
    } else this.reset();
    if (step.joining.length > 0) logits = this.join(logits, step.joining);
    if (logits === null) throw new Error('a cache step needs a live slot or a joining prompt');
    this.trim([...step.mask, ...step.joining.map(() => 1)]);
    return logits;
  }

  /** Drop the cache. */
  reset(): void {
    this.cache?.dispose();
    this.cache = null;
    this.pads = [];
  }

  /** Prefill the joining prompts and merge their cache and logits after the slots. */
  private join(liveLogits: tf.Tensor2D | null, prompts: readonly (readonly number[])[]): tf.Tensor2D {
    const B = prompts.length;
    const P = Math.max(...prompts.map((p) => p.length));
    const ids = new Int32Array(B * P).fill(this.padTokenId);
    const mask = new Int32Array(B * P);
    prompts.forEach((p, b) => {
      ids.set(p, b * P + P - p.length);
      mask.fill(1, b * P + P - p.length, (b + 1) * P);
    });
    const pIds = tf.tensor2d(ids, [B, P], 'int32');
    const pMask = tf.tensor2d(mask, [B, P], 'int32');
    let fresh: { logits: tf.Tensor2D; cache: KVCache };
    try {
      fresh = this.model.prefill(pIds, pMask);
    } finally {
      tf.dispose([pIds, pMask]);
    }
    const freshPads = prompts.map((p) => P - p.length);
    if (this.cache === null || liveLogits === null) {
      this.cache?.dispose();
      this.cache = fresh.cache;
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
    return merged.logits;
  }

  /** Keep only the slots `keep`: keys, values `[B, KV, S, hd]` and the key mask `[B, S]`. */
  private compact(keep: readonly number[]): void {
    const cache = this.cache!;
    const idx = tf.tensor1d(keep as number[], 'int32');
    const old = cache.layers;
    const oldMask = cache.keyMask;
    cache.layers = old.map((l) => ({ k: tf.gather(l.k, idx) as tf.Tensor4D, v: tf.gather(l.v, idx) as tf.Tensor4D }));
    cache.keyMask = tf.gather(oldMask, idx) as tf.Tensor2D;
    for (const l of old) tf.dispose([l.k, l.v]);
    tf.dispose([oldMask, idx]);
    this.pads = keep.map((s) => this.pads[s]!);
  }

  /** Cut the cache columns in front of every live slot's first real key (`live[s]`: 1 live, 0 finished). */
  private trim(live: readonly number[]): void {
    const cache = this.cache;
    if (cache === null) return;
    const cut = Math.min(...this.pads.flatMap((p, s) => (live[s] === 0 ? [] : [p])));
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
}

/**
 * The recompute twin of a step: the last-column logits `[B, V]` of a full forward pass over each
 * sequence (prompt and tokens so far), left-padded with `padTokenId`.
 */
export function fullLogits(model: Qwen3Model, sequences: readonly (readonly number[])[], padTokenId: number): tf.Tensor2D {
  const B = sequences.length;
  const L = Math.max(...sequences.map((s) => s.length));
  const ids = new Int32Array(B * L).fill(padTokenId);
  const mask = new Int32Array(B * L);
  sequences.forEach((seq, b) => {
    ids.set(seq, b * L + L - seq.length);
    mask.fill(1, b * L + L - seq.length, (b + 1) * L);
  });
  const { D, V } = model.dims;
  return tf.tidy(() => {
    const h = model.hidden({ ids: tf.tensor2d(ids, [B, L], 'int32'), attentionMask: tf.tensor2d(mask, [B, L], 'int32') });
    const last = tf.slice(h, [0, L - 1, 0], [B, 1, D]) as tf.Tensor3D;
    return tf.reshape(model.project(last), [B, V]) as tf.Tensor2D;
  });
}
