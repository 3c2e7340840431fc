import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyWorkers, loadModel, loadTokenizer, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { policySampler, type PolicySampler } from './policy-sampler.js';
import { sampleGroups } from './sample-groups.js';
import { splitRequests, workerSampler } from './worker-sampler.js';
import type { SampleRequest } from './sampler.js';
import { tinyModelDir, useCpu } from '../test-utils/tiny-policy.js';

// The workers load the sample task from dist/ (a worker cannot run TypeScript): build first.
describe('workerSampler', () => {
  let dir: { dir: string; remove(): void };
  let model: Qwen3Model;
  let tokenizer: Tokenizer;
  let workers: PolicyWorkers;
  let base: PolicySampler;
  beforeAll(async () => {
    await useCpu();
    dir = await tinyModelDir(3);
    model = loadModel(dir.dir);
    tokenizer = loadTokenizer(dir.dir);
    workers = await PolicyWorkers.start(model, { workers: 2 });
    base = policySampler(model, tokenizer, { batchSize: 8 });
  });
  afterAll(async () => {
    await workers.close();
    model.dispose();
    tokenizer.free();
    dir.remove();
  });

  const requests = (): SampleRequest[] =>
    ['Ann', 'Ben has 12 apples.', 'Tom has 80 stones. He buys 53 more.', 'Cy'].map((text, i) => ({
      prompt: { tokens: tokenizer.encode(text) },
      n: 3,
      params: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 12, stop: [], seed: 40 + i },
    }));

  it('decodes the requests split over the workers into the same completions as one sampler here, in request order', async () => {
    const ws = workerSampler(workers, model, base, { modelDir: dir.dir, options: { batchSize: 8, eosTokenIds: [...base.eosTokenIds] } });
    const want = await base.sample(requests());
    const got = await ws.sample(requests());
    expect(got.map((r) => r.completions.map((c) => [c.tokens, c.finish, c.text]))).toEqual(
      want.map((r) => r.completions.map((c) => [c.tokens, c.finish, c.text])),
    );
    expect(got.map((r) => r.promptTokens)).toEqual(want.map((r) => r.promptTokens));
    for (const [r, w] of got.map((g, i) => [g, want[i]!] as const))
      for (const [c, d] of r.completions.map((c, j) => [c, w.completions[j]!] as const))
        expect(Array.from(c.logprobs!)).toEqual(Array.from(d.logprobs!).map((x) => expect.closeTo(x, 5)));
    // both workers decoded
    expect(workers.lastRun!.task.every((s) => s > 0)).toBe(true);
    // and it is a Sampler: sampleGroups lays its results out as a batch
    const { batch } = await sampleGroups(
      requests().map((r) => r.prompt),
      ws,
      { groupSize: 2, maxNewTokens: 8, seed: 5 },
    );
    expect(batch.numRollouts).toBe(8);
  });

  it('splits requests into contiguous chunks of about equal rows', () => {
    const r = (n: number): SampleRequest => ({
      prompt: { tokens: [1] },
      n,
      params: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 1, stop: [], seed: 0 },
    });
    const reqs = [r(4), r(4), r(4), r(4)];
    expect(splitRequests(reqs, 2).map((c) => c.length)).toEqual([2, 2]);
    expect(splitRequests(reqs, 1)).toEqual([reqs]);
    expect(splitRequests([r(4)], 3).map((c) => c.length)).toEqual([0, 1, 0]);
    expect(splitRequests([r(1), r(1), r(6)], 2).map((c) => c.length)).toEqual([2, 1]);
  });
});
