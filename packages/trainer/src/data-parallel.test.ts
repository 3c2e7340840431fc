import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PolicyWorkers, Qwen3Model, batchLogprobs, selectBackend } from '@rlvr/policy';
import { METRIC, type RolloutBatch } from '@rlvr/core';
import { advantagesOf, makeBatch, tinyConfig } from './test-utils/batches.js';
import { tf } from './tf.js';
import { Trainer } from './trainer.js';
import type { TrainerConfigInput } from './config.js';
import { parallelLogprobs, splitRows } from './data-parallel.js';
import { maskOf } from './loss.js';
import type { AdvantageRefresh, RefreshEvery } from './refresh.js';

// The workers load the trainer's gradient task from dist/ (a worker cannot run TypeScript): build first.
const POISON = new URL('./test-utils/poison.mjs', import.meta.url).href;

const engines: PolicyWorkers[] = [];
async function start(model: Qwen3Model, workers: number): Promise<PolicyWorkers> {
  const engine = await PolicyWorkers.start(model, { workers });
  engines.push(engine);
  return engine;
}

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

const batches = (n: number): RolloutBatch[] => Array.from({ length: n }, (_, k) => makeBatch(20 + k, 4, 4));

/** A step that spans several micro-batches (small token budget), mini-batches and passes, with a reference model's KL. */
const config: TrainerConfigInput = { schedule: { lr: 1e-2 }, tokenBudget: 40, miniBatches: 2, epochs: 2, klCoef: 0.05, entropyCoef: 0.01 };

async function train(
  workers: number | null,
  steps: number,
  cfg: TrainerConfigInput = config,
): Promise<{ params: Map<string, Float32Array>; metrics: Record<string, number>[]; trainer: Trainer }> {
  const model = Qwen3Model.random(tinyConfig, 11, 0.3);
  const refModel = Qwen3Model.random(tinyConfig, 11, 0.3);
  const engine = workers === null ? undefined : await start(model, workers);
  const trainer = new Trainer(model, cfg, { refModel, ...(engine ? { workers: engine } : {}) });
  const metrics: Record<string, number>[] = [];
  for (const b of batches(steps)) metrics.push((await trainer.step(b, advantagesOf(b))).metrics);
  const params = new Map([...model.params].map(([k, v]) => [k, v.dataSync() as Float32Array]));
  return { params, metrics, trainer };
}

function maxRelDiff(a: Map<string, Float32Array>, b: Map<string, Float32Array>): number {
  let worst = 0;
  for (const [k, x] of a) {
    const y = b.get(k)!;
    let num = 0;
    let den = 0;
    for (let i = 0; i < x.length; i++) {
      num = Math.max(num, Math.abs(x[i]! - y[i]!));
      den = Math.max(den, Math.abs(y[i]!));
    }
    worst = Math.max(worst, num / den);
  }
  return worst;
}

async function moments(trainer: Trainer): Promise<Map<string, number[]>> {
  return new Map([...(await trainer.optimizer.exportState()).tensors].map(([k, t]) => [k, Array.from(t.data)]));
}

describe('Trainer.step on policy workers', () => {
  it('with 1 worker is bit-identical to the in-process update, metrics included', async () => {
    const inProcess = await train(null, 3);
    const oneWorker = await train(1, 3);
    for (const [k, x] of inProcess.params) expect(Array.from(oneWorker.params.get(k)!), k).toEqual(Array.from(x));
    const { 'time/weight_sync_s': sync, 'time/grad_reduce_s': reduce, tokens_per_s: _a, ...rest } = oneWorker.metrics[2]!;
    const { tokens_per_s: _b, ...want } = inProcess.metrics[2]!;
    expect(rest).toEqual(want);
    expect(sync).toBeGreaterThan(0);
    expect(reduce).toBeGreaterThan(0);
    expect(oneWorker.trainer.optimizer.step).toBe(12);
  });

  it('with 2 workers is within 1e-5 relative of 1 worker after 10 steps', async () => {
    const cfg = { ...config, epochs: 1 };
    const one = await train(1, 10, cfg);
    const two = await train(2, 10, cfg);
    const start = Qwen3Model.random(tinyConfig, 11, 0.3);
    const initial = new Map([...start.params].map(([k, v]) => [k, v.dataSync() as Float32Array]));
    start.dispose();
    // the parameters moved (so the comparison means something), and the two runs agree
    expect(maxRelDiff(one.params, initial)).toBeGreaterThan(1e-2);
    expect(maxRelDiff(two.params, one.params)).toBeLessThan(1e-5);
    expect(two.metrics[9]!['loss/policy']).toBeCloseTo(one.metrics[9]!['loss/policy']!, 6);
  });

  it('gives the same result on every run with the same data and worker count', async () => {
    const a = await train(2, 2);
    const b = await train(2, 2);
    for (const [k, x] of a.params) expect(Array.from(b.params.get(k)!), k).toEqual(Array.from(x));
  });

  it('a worker that exits mid-step rejects the step with its error and leaves the model and optimizer as they were', async () => {
    const model = Qwen3Model.random(tinyConfig, 12, 0.3);
    const engine = await start(model, 2);
    // one micro-batch per worker and pass: forward pass 1 recomputes the old log-probs, 2 is in the first optimizer step, 3 in the second
    const trainer = new Trainer(model, { ...config, klCoef: 0, tokenBudget: 8192 }, { workers: engine });
    const [first, second] = batches(2);
    await trainer.step(first!, advantagesOf(first!));
    const params = new Map([...model.params].map(([k, v]) => [k, Array.from(v.dataSync())]));
    const state = { steps: trainer.steps, optimizerStep: trainer.optimizer.step, moments: moments(trainer) };
    // worker 1 exits in the second optimizer step of the next Trainer.step: the first one was applied by then
    await engine.run(POISON, 'exitOnForward', [
      { worker: 1, call: 3 },
      { worker: 1, call: 3 },
    ]);
    await expect(trainer.step(second!, advantagesOf(second!))).rejects.toThrow(
      'policy worker 1 of 2 exited with code 7; the engine is closed, start a new one',
    );
    for (const [k, v] of model.params) expect(Array.from(v.dataSync()), k).toEqual(params.get(k));
    expect({ steps: trainer.steps, optimizerStep: trainer.optimizer.step, moments: moments(trainer) }).toEqual(state);
    await expect(trainer.step(second!, advantagesOf(second!))).rejects.toThrow(/unusable after a failure .*start a new engine/);
  });

  it('a worker that throws rejects the step with its error, naming the worker', async () => {
    const model = Qwen3Model.random(tinyConfig, 13, 0.3);
    const engine = await start(model, 2);
    const trainer = new Trainer(model, { tokenBudget: 40 }, { workers: engine });
    const before = new Map([...model.params].map(([k, v]) => [k, Array.from(v.dataSync())]));
    await engine.run(POISON, 'throwOnForward', [{ worker: 0 }, { worker: 0 }]);
    const b = makeBatch(3, 4, 4);
    await expect(trainer.step(b, advantagesOf(b))).rejects.toThrow(
      'policy worker 0 of 2 threw RangeError: poisoned replica; the engine is closed, start a new one',
    );
    for (const [k, v] of model.params) expect(Array.from(v.dataSync()), k).toEqual(before.get(k));
    expect(trainer.steps).toBe(0);
  });

  it('leaks no tensors on the calling thread over many steps', async () => {
    const model = Qwen3Model.random(tinyConfig, 14, 0.3);
    const engine = await start(model, 2);
    const trainer = new Trainer(model, { tokenBudget: 40, miniBatches: 2 }, { workers: engine });
    const b = makeBatch(4, 4, 4);
    await trainer.step(b, advantagesOf(b));
    const after1 = tf.memory().numTensors;
    for (let k = 0; k < 5; k++) await trainer.step(b, advantagesOf(b));
    expect(tf.memory().numTensors).toBe(after1);
  });

  it('refuses workers holding replicas of another model', async () => {
    const other = Qwen3Model.random({ ...tinyConfig, hidden_size: 8, head_dim: 4 });
    const engine = await start(other, 1);
    expect(() => new Trainer(Qwen3Model.random(tinyConfig), {}, { workers: engine })).toThrow(
      'field workers: the policy workers hold replicas of another model',
    );
  });
});

/** Sequence advantages times exp(log-prob) of each token under the current parameters: they move with the parameters. */
function probabilityRefresh(every: RefreshEvery): AdvantageRefresh & { calls: { inProcess: number; onWorkers: number } } {
  const pass = { tokenBudget: 40, padId: 0, temperature: 1 };
  const weigh = (batch: RolloutBatch, rows: readonly number[], logprobs: Float32Array) => {
    const base = advantagesOf(batch);
    const out = new Float32Array(base.length);
    for (const i of rows)
      for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++) out[t] = base[t]! * Math.exp(logprobs[t]!);
    return out;
  };
  const calls = { inProcess: 0, onWorkers: 0 };
  return {
    every,
    spec: { module: 'file:///unused.mjs', factory: 'unused', options: {} },
    calls,
    async advantages(model, batch, rows) {
      calls.inProcess++;
      return weigh(batch, rows, (await batchLogprobs(model, batch, { ...pass, include: maskOf(batch.numRollouts, rows) })).logprobs);
    },
    async advantagesOnWorkers(workers, model, batch, rows) {
      calls.onWorkers++;
      return weigh(batch, rows, await parallelLogprobs(workers, model, batch, rows, pass, { weightSyncSeconds: 0 }));
    },
  };
}

describe('the forward-only passes of a step on policy workers', () => {
  it('recomputes the old log-probs on the workers: with 1 and 2 workers, those of the in-process pass', async () => {
    const model = Qwen3Model.random(tinyConfig, 21, 0.3);
    const b = makeBatch(31, 4, 4);
    const all = Array.from({ length: b.numRollouts }, (_, i) => i);
    const some = all.filter((i) => i % 3 !== 1);
    const pass = { tokenBudget: 40, padId: 0, temperature: 0.7 };
    for (const workers of [1, 2]) {
      const engine = await start(model, workers);
      for (const rows of [all, some]) {
        const want = (await batchLogprobs(model, b, { ...pass, include: maskOf(b.numRollouts, rows) })).logprobs;
        const tally = { weightSyncSeconds: 0 };
        const got = await parallelLogprobs(engine, model, b, rows, pass, tally);
        // on the cpu backend a row's log-probs do not depend on the other rows of its micro-batch (padding
        // included): bit for bit (on wasm, 2 workers differ from 1 in a few tokens by under 1e-6)
        expect(Array.from(got), `${workers} workers, ${rows.length} rows`).toEqual(Array.from(want));
      }
      // both workers had rows
      expect(engine.lastRun!.task.every((s) => s > 0)).toBe(true);
    }
    model.dispose();
  });

  it("runs the reference model's pass on the workers with its own weights, then the update with the policy's: 1 worker is bit-identical", async () => {
    const run = async (workers: number | null) => {
      const model = Qwen3Model.random(tinyConfig, 22, 0.3);
      const refModel = Qwen3Model.random(tinyConfig, 23, 0.3); // not the policy's weights
      const engine = workers === null ? undefined : await start(model, workers);
      const trainer = new Trainer(model, { ...config, epochs: 1 }, { refModel, ...(engine ? { workers: engine } : {}) });
      const metrics: Record<string, number>[] = [];
      for (const b of batches(2)) metrics.push((await trainer.step(b, advantagesOf(b))).metrics);
      const params = new Map([...model.params].map(([k, v]) => [k, v.dataSync() as Float32Array]));
      const publishes = engine?.syncStats.publishes ?? 0;
      refModel.dispose();
      return { params, metrics, publishes };
    };
    const inProcess = await run(null);
    const one = await run(1);
    for (const [k, x] of inProcess.params) expect(Array.from(one.params.get(k)!), k).toEqual(Array.from(x));
    expect(one.metrics[1]![METRIC.klRef]).toBe(inProcess.metrics[1]![METRIC.klRef]);
    expect(one.metrics[1]![METRIC.klRef]).toBeGreaterThan(0);
    // copies into the replicas: the start; per step the reference's weights, then the policy's for each of its 2
    // optimizer steps; and in step 2 the updated policy's for the old log-probs first
    expect(one.publishes).toBe(1 + 3 + 4);
    const two = await run(2);
    expect(maxRelDiff(two.params, inProcess.params)).toBeLessThan(1e-5);
  });

  it('runs an advantage refresh on the workers when it can: 1 worker bit-identical, 2 within 1e-5, the same refresh count', async () => {
    const run = async (workers: number | null) => {
      const model = Qwen3Model.random(tinyConfig, 24, 0.3);
      const engine = workers === null ? undefined : await start(model, workers);
      const trainer = new Trainer(model, { ...config, klCoef: 0 }, engine ? { workers: engine } : {});
      const refresh = probabilityRefresh('minibatch');
      const b = makeBatch(32, 4, 4);
      const { metrics } = await trainer.step(b, advantagesOf(b), { refresh });
      const params = new Map([...model.params].map(([k, v]) => [k, v.dataSync() as Float32Array]));
      return { params, metrics, calls: refresh.calls };
    };
    const inProcess = await run(null);
    expect(inProcess.calls).toEqual({ inProcess: 3, onWorkers: 0 });
    const one = await run(1);
    expect(one.calls).toEqual({ inProcess: 0, onWorkers: 3 });
    for (const [k, x] of inProcess.params) expect(Array.from(one.params.get(k)!), k).toEqual(Array.from(x));
    const two = await run(2);
    expect(two.calls).toEqual({ inProcess: 0, onWorkers: 3 });
    expect(maxRelDiff(two.params, inProcess.params)).toBeLessThan(1e-5);
    for (const r of [one, two]) {
      expect(r.metrics[METRIC.refreshCount]).toBe(inProcess.metrics[METRIC.refreshCount]);
      expect(r.metrics[METRIC.refreshChange]).toBeCloseTo(inProcess.metrics[METRIC.refreshChange]!, 5);
      expect(r.metrics[METRIC.timeRefresh]).toBeGreaterThan(0);
    }
  });

  it('a worker that exits during a refresh rejects the step with its error and leaves the model and optimizer as they were', async () => {
    const model = Qwen3Model.random(tinyConfig, 25, 0.3);
    const engine = await start(model, 2);
    const trainer = new Trainer(model, { ...config, klCoef: 0, epochs: 1, tokenBudget: 8192 }, { workers: engine });
    const [first, second] = batches(2);
    await trainer.step(first!, advantagesOf(first!), { refresh: probabilityRefresh('minibatch') });
    const params = new Map([...model.params].map(([k, v]) => [k, Array.from(v.dataSync())]));
    const state = { steps: trainer.steps, optimizerStep: trainer.optimizer.step, moments: moments(trainer) };
    // one micro-batch per worker and pass: forward pass 1 recomputes the old log-probs, 2 is the first
    // optimizer step's (applied by then), 3 the refresh before the second
    await engine.run(POISON, 'exitOnForward', [
      { worker: 1, call: 3 },
      { worker: 1, call: 3 },
    ]);
    const refresh = probabilityRefresh('minibatch');
    await expect(trainer.step(second!, advantagesOf(second!), { refresh })).rejects.toThrow(
      'policy worker 1 of 2 exited with code 7; the engine is closed, start a new one',
    );
    expect(refresh.calls).toEqual({ inProcess: 0, onWorkers: 1 });
    for (const [k, v] of model.params) expect(Array.from(v.dataSync()), k).toEqual(params.get(k));
    expect({ steps: trainer.steps, optimizerStep: trainer.optimizer.step, moments: moments(trainer) }).toEqual(state);
  });
});

describe('splitRows', () => {
  it('cuts the rows in planning order into contiguous chunks of about equal length, depending on the data and the count only', () => {
    const b = makeBatch(7, 4, 4);
    const rows = Array.from({ length: b.numRollouts }, (_, i) => i);
    const [all] = splitRows(b, rows, 8192, 1);
    const two = splitRows(b, rows, 8192, 2);
    expect(two.flat()).toEqual(all);
    expect(two[0]!.length).toBeGreaterThan(0);
    expect(two[1]!.length).toBeGreaterThan(0);
    const len = (i: number) => b.promptOffsets[i + 1]! - b.promptOffsets[i]! + b.completionOffsets[i + 1]! - b.completionOffsets[i]!;
    const [l0, l1] = two.map((c) => c.reduce((s, i) => s + len(i), 0));
    expect(Math.abs(l0! - l1!)).toBeLessThanOrEqual(Math.max(...rows.map(len)));
    expect(splitRows(b, [3], 8192, 3).filter((c) => c.length > 0)).toEqual([[3]]);
  });
});
