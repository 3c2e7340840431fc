import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { METRIC, type RolloutBatch } from '@rlvr/core';
import { Qwen3Model, saveModel, selectBackend } from '@rlvr/policy';
import { Trainer } from './trainer.js';
import { resolveRefresh, type AdvantageRefresh, type RefreshContext, type RefreshEvery } from './refresh.js';
import { advantagesOf, makeBatch, tinyConfig } from './test-utils/batches.js';

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

const MODULE = new URL('../test/fixtures/refresh-module.mjs', import.meta.url).href;

/** A refresh that records when it is called, with which rows, and a fingerprint of the parameters it sees. */
function recording(every: RefreshEvery, batch: RolloutBatch, adv: Float32Array = advantagesOf(batch)) {
  const calls: { ctx: RefreshContext; rows: number[]; params: number }[] = [];
  const refresh: AdvantageRefresh = {
    every,
    spec: { module: MODULE, factory: 'probabilityWeighted', options: {} },
    async advantages(model, _batch, rows, ctx) {
      calls.push({ ctx, rows: [...rows].sort((a, b) => a - b), params: await fingerprint(model) });
      return adv;
    },
  };
  return { refresh, calls };
}

/** A number that changes whenever any parameter does. */
async function fingerprint(model: Qwen3Model): Promise<number> {
  let s = 0;
  for (const t of (await model.toHost()).values()) for (let i = 0; i < t.data.length; i++) s += t.data[i]! * ((i % 7) + 1);
  return s;
}

const all = (B: number) => Array.from({ length: B }, (_, i) => i);

describe('Trainer.step with options.refresh', () => {
  it('minibatch: before every optimizer step after the first, for its rows, with the parameters of that moment', async () => {
    const model = Qwen3Model.random(tinyConfig, 3);
    const batch = makeBatch(4, 2, 4);
    const { refresh, calls } = recording('minibatch', batch);
    const trainer = new Trainer(model, { epochs: 3, miniBatches: 2, schedule: { lr: 1e-2 }, tokenBudget: 2048 }, { padId: 1 });
    const start = await fingerprint(model);
    const { metrics } = await trainer.step(batch, advantagesOf(batch), { refresh });
    expect(calls.map((c) => [c.ctx.pass, c.ctx.miniBatch])).toEqual([
      [0, 1],
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
    ]);
    // how a refresh's own forward pass is micro-batched: the trainer's
    for (const c of calls) expect([c.ctx.padId, c.ctx.tokenBudget]).toEqual([1, 2048]);
    // each pass's mini-batches split the batch; the first update of the step used the given advantages
    for (const pass of [1, 2])
      expect(
        calls
          .filter((c) => c.ctx.pass === pass)
          .flatMap((c) => c.rows)
          .sort((a, b) => a - b),
      ).toEqual(all(8));
    for (const c of calls) expect(c.rows).toHaveLength(4);
    // the parameters moved before every call, and again between calls
    const seen = [start, ...calls.map((c) => c.params)];
    for (let k = 1; k < seen.length; k++) expect(seen[k]).not.toBe(seen[k - 1]);
    expect(metrics[METRIC.refreshCount]).toBe(5);
    expect(metrics[METRIC.refreshChange]).toBe(0); // it returned the given advantages
    expect(metrics[METRIC.timeRefresh]).toBeGreaterThanOrEqual(0);
    model.dispose();
  });

  it('epoch: once before every pass after the first, for all rollouts', async () => {
    const model = Qwen3Model.random(tinyConfig, 3);
    const batch = makeBatch(4, 2, 4);
    const { refresh, calls } = recording('epoch', batch);
    await new Trainer(model, { epochs: 3, miniBatches: 2 }).step(batch, advantagesOf(batch), { refresh });
    expect(calls.map((c) => [c.ctx.pass, c.ctx.miniBatch])).toEqual([
      [1, 0],
      [2, 0],
    ]);
    for (const c of calls) expect(c.rows).toEqual(all(8));
    model.dispose();
  });

  it('only asks for the rollouts that train (masked truncated ones are not refreshed)', async () => {
    const model = Qwen3Model.random(tinyConfig, 3);
    const batch = makeBatch(4, 2, 4);
    batch.finish[2] = 1; // length
    const { refresh, calls } = recording('epoch', batch);
    await new Trainer(model, { epochs: 2, maskTruncated: true }).step(batch, advantagesOf(batch), { refresh });
    expect(calls[0]!.rows).toEqual(all(8).filter((i) => i !== 2));
    model.dispose();
  });

  it('trains on what the refresh returns, and a refresh returning the given advantages changes nothing', async () => {
    const batch = makeBatch(5, 2, 4);
    const adv = advantagesOf(batch);
    const run = async (options: { refresh?: AdvantageRefresh }) => {
      const model = Qwen3Model.random(tinyConfig, 9);
      await new Trainer(model, { epochs: 2, miniBatches: 2, schedule: { lr: 1e-2 } }).step(batch, adv, options);
      const f = await fingerprint(model);
      model.dispose();
      return f;
    };
    const plain = await run({});
    expect(await run({ refresh: recording('minibatch', batch).refresh })).toBe(plain);
    const doubled = adv.map((a) => 2 * a);
    expect(await run({ refresh: recording('minibatch', batch, doubled).refresh })).not.toBe(plain);
  });

  it('reports how far the refreshed advantages moved from the given ones', async () => {
    const model = Qwen3Model.random(tinyConfig, 3);
    const batch = makeBatch(4, 2, 4);
    const adv = advantagesOf(batch);
    const { refresh } = recording(
      'epoch',
      batch,
      adv.map((a) => 1.5 * a),
    );
    const { metrics } = await new Trainer(model, { epochs: 2 }).step(batch, adv, { refresh });
    expect(metrics[METRIC.refreshChange]).toBeCloseTo(0.5, 6);
    model.dispose();
  });

  it('refuses a refresh with an advantage callback, a result of the wrong length or a non-finite value', async () => {
    const model = Qwen3Model.random(tinyConfig, 3);
    const batch = makeBatch(4, 2, 4);
    const adv = advantagesOf(batch);
    const trainer = new Trainer(model, { epochs: 2 });
    await expect(trainer.step(batch, () => adv, { refresh: recording('epoch', batch).refresh })).rejects.toThrow(
      /either an advantage callback or options.refresh/,
    );
    await expect(trainer.step(batch, adv, { refresh: recording('epoch', batch, new Float32Array(3)).refresh })).rejects.toThrow(
      /refreshed advantages has 3 values, expected/,
    );
    const bad = adv.slice();
    bad[batch.completionOffsets[1]!] = Number.NaN;
    await expect(trainer.step(batch, adv, { refresh: recording('epoch', batch, bad).refresh })).rejects.toThrow(
      /rollout 1, field refresh: refreshed advantage of completion token 0 is NaN/,
    );
    model.dispose();
  });
});

describe('resolveRefresh', () => {
  it('builds the refresh its spec names, in this thread and in a worker thread from the data alone', async () => {
    const batch = makeBatch(7, 2, 3);
    const options = { every: 'minibatch', sequence: Array.from({ length: batch.numRollouts }, (_, i) => i - 2.5) };
    const refresh = await resolveRefresh({ module: MODULE, factory: 'probabilityWeighted', options });
    expect(refresh.every).toBe('minibatch');
    const model = Qwen3Model.random(tinyConfig, 11);
    const rows = [1, 3, 4];
    const here = await refresh.advantages(model, batch, rows, { pass: 1, miniBatch: 0, padId: 0, tokenBudget: 4096 });
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-refresh-'));
    try {
      await saveModel(model, dir);
      // the spec travels as JSON: the worker imports the module by URL and calls the factory
      const spec = JSON.parse(JSON.stringify(refresh.spec));
      const there = await new Promise<Float32Array>((resolve, reject) => {
        const w = new Worker(new URL('../test/fixtures/refresh-worker.mjs', import.meta.url), {
          workerData: { spec, modelDir: dir, batch, rows },
        });
        w.once('message', resolve);
        w.once('error', reject);
      });
      for (const i of rows) {
        for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++) {
          expect(there[t]).not.toBe(0);
          expect(there[t]).toBeCloseTo(here[t]!, 6);
        }
      }
    } finally {
      model.dispose();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the module and factory when either is wrong', async () => {
    await expect(resolveRefresh({ module: MODULE, factory: 'nope', options: {} })).rejects.toThrow(
      /field refresh.factory: refresh factory nope of .* is not an exported function/,
    );
    await expect(resolveRefresh({ module: 'file:///no/such/module.mjs', factory: 'f', options: {} })).rejects.toThrow(
      /field refresh.module: cannot load the module of refresh factory f/,
    );
    await expect(resolveRefresh({ module: 'node:util', factory: 'format', options: {} })).rejects.toThrow(
      /did not return an advantage refresh/,
    );
    await expect(resolveRefresh({ module: 'node:path', factory: 'join', options: {} })).rejects.toThrow(
      /refresh factory join of node:path failed: The "path" argument/,
    );
  });
});
