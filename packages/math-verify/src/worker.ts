/**
 * What a verifier thread runs (`worker-thread.ts` is the thread's entry): a chunk of items graded by the pure verifier,
 * its results packed. The pool terminates the thread when an item exceeds its wall-clock budget.
 */
import { type RewardResult, type VerifyResult, gradeAnswer, gradeCompletion } from './grade.js';
import type { VerifyOptions } from './options.js';

/**
 * A chunk of items as sent: parallel arrays, which cost less to copy between threads than one object per item.
 * Item `i` is `kinds[i]` (0 = reward: `a` the completion, `b` the gold; 1 = verify: `a` the gold, `b` the pred) with
 * the resolved options `options[o[i]]` (JSON, parsed once per distinct value in each worker).
 */
export interface WorkerTask {
  /** The chunk's number in its pool, written to the progress words so the pool knows which chunk an item is in. */
  seq: number;
  kinds: Uint8Array;
  a: string[];
  b: string[];
  o: Uint16Array;
  options: string[];
  /**
   * One byte per item in shared memory (`ITEM_*`): an item runs only if the worker moves it from pending to taken
   * (`Atomics.compareExchange`), so the pool can withdraw items a worker has not reached (a cancelled call, items
   * handed to an idle worker instead) without a race.
   */
  state: SharedArrayBuffer;
}

export const ITEM_PENDING = 0;
export const ITEM_WITHDRAWN = 1;
const ITEM_TAKEN = 2;

/**
 * A verifier thread's progress words, shared with the pool (float64 each): the wall-clock time (ms) at which the
 * current item started (0 between items), the `seq` of its chunk, its index, and the `seq` of the last chunk the
 * thread finished. The pool times each item from the first and knows which item a stuck or dead thread was on.
 */
export const PROGRESS_WORDS = 4;
export const P_START = 0;
export const P_SEQ = 1;
export const P_INDEX = 2;
export const P_DONE = 3;

export const REWARD = 0;
export const VERIFY = 1;

/** `flags` bits of a packed result. */
const EQUAL = 1;
const LIMIT_SIZE = 2;
const LIMIT_DEPTH = 4;
const HAS_BOX = 8;
const SKIPPED = 16;

/**
 * A chunk's results as sent back, packed the same way (copying result objects between threads cost more than grading
 * a cheap answer): per item a flags byte, three strings (reward: extracted, reason; verify: reason, gold, pred) and,
 * for a reward with a box, its four indices. `unpackResult` rebuilds the objects, with their keys in the same order.
 */
export interface PackedResults {
  flags: Uint8Array;
  strings: (string | null)[];
  boxes: Int32Array;
}

function pack(kinds: Uint8Array, results: (RewardResult | VerifyResult | null)[]): PackedResults {
  const n = results.length;
  const flags = new Uint8Array(n);
  const strings: (string | null)[] = new Array(3 * n).fill(null);
  const boxes = new Int32Array(4 * n);
  for (let i = 0; i < n; i++) {
    const r = results[i] ?? null;
    if (r === null) {
      flags[i] = SKIPPED;
      continue;
    }
    let f = r.limit === 'size' ? LIMIT_SIZE : r.limit === 'depth' ? LIMIT_DEPTH : 0;
    if (kinds[i] === REWARD) {
      const x = r as RewardResult;
      if (x.reward === 1) f |= EQUAL;
      strings[3 * i] = x.extracted;
      strings[3 * i + 1] = x.reason;
      if (x.answer !== null) {
        f |= HAS_BOX;
        boxes.set([x.answer.start, x.answer.contentStart, x.answer.contentEnd, x.answer.end], 4 * i);
      }
    } else {
      const x = r as VerifyResult;
      if (x.equal) f |= EQUAL;
      strings[3 * i] = x.reason;
      strings[3 * i + 1] = x.gold;
      strings[3 * i + 2] = x.pred;
    }
    flags[i] = f;
  }
  return { flags, strings, boxes };
}

/** Item `i` of a packed chunk as the object `gradeCompletion` / `gradeAnswer` returned; null for a skipped item. */
export function unpackResult(p: PackedResults, kind: number, i: number): RewardResult | VerifyResult | null {
  const f = p.flags[i] as number;
  if (f & SKIPPED) return null;
  const limit = f & LIMIT_SIZE ? 'size' : f & LIMIT_DEPTH ? 'depth' : null;
  let r: RewardResult | VerifyResult;
  if (kind === REWARD) {
    const b = p.boxes;
    const at = 4 * i;
    r = {
      reward: f & EQUAL ? 1 : 0,
      extracted: p.strings[3 * i] as string | null,
      reason: p.strings[3 * i + 1] as string,
      answer:
        f & HAS_BOX
          ? { start: b[at] as number, contentStart: b[at + 1] as number, contentEnd: b[at + 2] as number, end: b[at + 3] as number }
          : null,
    };
  } else {
    r = {
      equal: (f & EQUAL) !== 0,
      reason: p.strings[3 * i] as string,
      gold: p.strings[3 * i + 1] as string | null,
      pred: p.strings[3 * i + 2] as string | null,
    };
  }
  if (limit !== null) r.limit = limit;
  return r;
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

/** Grades the items of `task` this thread takes (skipping withdrawn ones) and packs their results. */
export function runChunk(task: WorkerTask, progress: Float64Array): PackedResults {
  const n = task.kinds.length;
  const state = new Uint8Array(task.state);
  const out: (RewardResult | VerifyResult | null)[] = [];
  progress[P_SEQ] = task.seq;
  for (let i = 0; i < n; i++) {
    if (Atomics.compareExchange(state, i, ITEM_PENDING, ITEM_TAKEN) !== ITEM_PENDING) {
      out.push(null);
      continue;
    }
    progress[P_INDEX] = i;
    progress[P_START] = Date.now();
    const a = task.a[i] as string;
    const b = task.b[i] as string;
    const opts = optionsFor(task.options[task.o[i] as number] as string);
    out.push(task.kinds[i] === REWARD ? gradeCompletion(a, b, opts) : gradeAnswer(a, b, opts));
  }
  progress[P_START] = 0;
  progress[P_DONE] = task.seq;
  return pack(task.kinds, out);
}
