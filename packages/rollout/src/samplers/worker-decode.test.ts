import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyWorkers, loadModel, loadTokenizer, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { DecodeBatch } from './decode-batch.js';
import { DecodeQueue } from './decode-queue.js';
import { DecodeRow, type DecodeParams } from './decode-row.js';
import { policyTokenBytes } from './policy-token-bytes.js';
import { WorkerDecodeExecutor } from './worker-decode.js';
import { tinyModelDir, useCpu } from '../test-utils/tiny-policy.js';

// The workers load the decode task from dist/ (a worker cannot run TypeScript): build first.
describe('WorkerDecodeExecutor', () => {
  let dir: { dir: string; remove(): void };
  let model: Qwen3Model;
  let tokenizer: Tokenizer;
  let workers: PolicyWorkers;
  beforeAll(async () => {
    await useCpu();
    dir = await tinyModelDir(4);
    model = loadModel(dir.dir, { trainable: false });
    tokenizer = loadTokenizer(dir.dir);
    workers = await PolicyWorkers.start(model, { workers: 2 });
  });
  afterAll(async () => {
    await workers.close();
    model.dispose();
    tokenizer.free();
    dir.remove();
  });

  const PROMPTS = ['Ann', 'Ben has 12 apples.', 'Tom has 80 stones. He buys 53 more, then gives away 59.', 'Sue has', 'Kim has 7 pens.'];
  const params = (over: Partial<DecodeParams>): DecodeParams => ({
    temperature: 0.9,
    topP: 0.95,
    topK: 0,
    maxNewTokens: 12,
    stop: [],
    seed: 3,
    ...over,
  });
  function rows(n: number, over: Partial<DecodeParams> = {}): DecodeRow[] {
    const bytes = policyTokenBytes(tokenizer);
    const eos = new Set([tokenizer.specialId('<|im_end|>')!]);
    return PROMPTS.flatMap((p, i) =>
      Array.from(
        { length: n },
        (_, j) => new DecodeRow(tokenizer.encode(p), params({ seed: 10 + i, maxNewTokens: 6 + 3 * i, ...over }), j, eos, bytes),
      ),
    );
  }
  const executor = (perWorker: number) => new WorkerDecodeExecutor(workers, model.dims.V, { capacityPerWorker: perWorker, padTokenId: 0 });

  it('decodes the tokens of the in-process batch, on both workers, with lanes refilled as rows end', async () => {
    const want = rows(3);
    await new DecodeQueue([new DecodeBatch(model, { capacity: 6, padTokenId: 0, kvCache: true })]).submit(want);
    const ex = executor(3);
    expect(ex.capacity).toBe(6);
    const got = rows(3);
    const q = new DecodeQueue([ex]);
    await q.submit(got);
    expect(got.map((r) => [r.tokens, r.end])).toEqual(want.map((r) => [r.tokens, r.end]));
    got.forEach((r, i) => expect(r.logprobs).toEqual(want[i]!.logprobs.map((x) => expect.closeTo(x, 5))));
    expect(q.stats()).toEqual({ waitingRequests: 0, runningRequests: 0, waitingRows: 0, runningRows: 0 });
  });

  it('places admitted rows on the lane with the most room', () => {
    const ex = executor(4);
    ex.admit(rows(1).slice(0, 3));
    // lane sizes 2 and 1: the next row goes to lane 1, then they alternate
    const lanes = (ex as unknown as { lanes: { size: number }[] }).lanes;
    expect(lanes.map((l) => l.size)).toEqual([2, 1]);
    ex.admit(rows(1).slice(0, 1));
    expect(lanes.map((l) => l.size)).toEqual([2, 2]);
    ex.dispose();
    expect(ex.size).toBe(0);
  });

  it('a cancelled request leaves its lanes; the others finish; the next request decodes as on a fresh executor', async () => {
    const ex = executor(4);
    const q = new DecodeQueue([ex]);
    const ac = new AbortController();
    const long = rows(2, { maxNewTokens: 200, ignoreEos: true });
    const gone = q.submit(long, ac.signal);
    const kept = rows(1, { maxNewTokens: 10 });
    const done = q.submit(kept);
    setTimeout(() => ac.abort(new Error('gone')), 30);
    await expect(gone).rejects.toThrow('gone');
    await done;
    await q.idle();
    expect(long.every((r) => r.cancelled || r.end !== null)).toBe(true);
    const alone = rows(1, { maxNewTokens: 10 });
    await new DecodeQueue([executor(4)]).submit(alone);
    const again = rows(1, { maxNewTokens: 10 });
    await q.submit(again);
    expect(again.map((r) => r.tokens)).toEqual(alone.map((r) => r.tokens));
  });
});
