import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { DecodeBatch, type DecodeExecutor } from './decode-batch.js';
import { DecodeQueue } from './decode-queue.js';
import { DecodeRow, type DecodeParams } from './decode-row.js';
import { policyTokenBytes } from './policy-token-bytes.js';
import { tinyPolicy, type TinyPolicy } from '../test-utils/tiny-policy.js';

let tiny: TinyPolicy;
beforeAll(async () => {
  tiny = await tinyPolicy();
});
afterAll(() => tiny.dispose());

const params = (over: Partial<DecodeParams> = {}): DecodeParams => ({
  temperature: 0.9,
  topP: 0.95,
  topK: 0,
  maxNewTokens: 12,
  stop: [],
  seed: 3,
  ...over,
});
const PROMPTS = ['Ann', 'Ben has 12 apples.', 'Tom has 80 stones. He buys 53 more, then gives away 59.', 'Sue has', 'Kim has 7 pens.'];

/** An executor that counts the rows it was given, around a real batch. */
class Counting implements DecodeExecutor {
  admitted = 0;
  constructor(private readonly inner: DecodeBatch) {}
  get capacity() {
    return this.inner.capacity;
  }
  get size() {
    return this.inner.size;
  }
  admit(rows: readonly DecodeRow[]) {
    this.admitted += rows.length;
    this.inner.admit(rows);
  }
  step() {
    return this.inner.step();
  }
  dispose() {
    this.inner.dispose();
  }
}

function rows(n: number, over: Partial<DecodeParams> = {}): DecodeRow[] {
  const bytes = policyTokenBytes(tiny.tokenizer);
  const eos = new Set([tiny.tokenizer.specialId('<|im_end|>')!]);
  return PROMPTS.flatMap((p, i) =>
    Array.from({ length: n }, (_, j) => new DecodeRow(tiny.tokenizer.encode(p), params({ seed: 10 + i, ...over }), j, eos, bytes)),
  );
}

const batch = (capacity: number) => new DecodeBatch(tiny.model, { capacity, padTokenId: 0, kvCache: true });

describe('DecodeQueue', () => {
  it('spreads rows over several executors (the data-parallel hook) and gives the tokens of one executor', async () => {
    const one = rows(3);
    await new DecodeQueue([batch(4)]).submit(one);
    const a = new Counting(batch(4));
    const b = new Counting(batch(4));
    const two = rows(3);
    await new DecodeQueue([a, b]).submit(two);
    expect(a.admitted).toBeGreaterThan(0);
    expect(b.admitted).toBeGreaterThan(0);
    expect(a.admitted + b.admitted).toBe(15);
    expect(two.map((r) => r.tokens)).toEqual(one.map((r) => r.tokens));
    for (let i = 0; i < one.length; i++)
      for (let t = 0; t < one[i]!.logprobs.length; t++) expect(two[i]!.logprobs[t]).toBeCloseTo(one[i]!.logprobs[t]!, 5);
  });

  it('refills the batch as rows end (continuous batching): a small batch gives the tokens of one large enough for all', async () => {
    const small = rows(2, { maxNewTokens: 9 });
    const q = new DecodeQueue([batch(3)]);
    await q.submit(small);
    const large = rows(2, { maxNewTokens: 9 });
    await new DecodeQueue([batch(64)]).submit(large);
    expect(small.map((r) => r.tokens)).toEqual(large.map((r) => r.tokens));
    expect(q.stats()).toEqual({ waitingRequests: 0, runningRequests: 0, waitingRows: 0, runningRows: 0 });
  });

  it('the same calls on an idle queue give the same tokens; an aborted request leaves the batch and frees it', async () => {
    const q = new DecodeQueue([batch(4)]);
    const x = rows(2);
    const y = rows(2);
    await q.submit(x);
    await q.submit(y);
    expect(y.map((r) => r.tokens)).toEqual(x.map((r) => r.tokens));
    const before = tf.memory().numTensors;
    const ac = new AbortController();
    const long = rows(4, { maxNewTokens: 200 });
    const p = q.submit(long, ac.signal);
    const other = rows(1, { maxNewTokens: 6 });
    const q2 = q.submit(other);
    setTimeout(() => ac.abort(new Error('gone')), 30);
    await expect(p).rejects.toThrow('gone');
    await q2;
    await q.idle();
    expect(long.every((r) => r.cancelled || r.end !== null)).toBe(true);
    expect(long.some((r) => r.tokens.length < 200)).toBe(true);
    expect(tf.memory().numTensors).toBe(before);
  });
});
