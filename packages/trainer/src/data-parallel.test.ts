import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PolicyWorkers, Qwen3Model, selectBackend } from '@rlvr/policy';
import type { RolloutBatch } from '@rlvr/core';
import { advantagesOf, makeBatch, tinyConfig } from './test-utils/batches.js';
import { tf } from './tf.js';
import { Trainer } from './trainer.js';
import type { TrainerConfigInput } from './config.js';
import { splitRows } from './data-parallel.js';

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

function moments(trainer: Trainer): Map<string, number[]> {
  return new Map([...trainer.optimizer.exportState().tensors].map(([k, t]) => [k, Array.from(t.data)]));
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
    // one micro-batch per worker and optimizer step: forward pass 2 is in the second optimizer step
    const trainer = new Trainer(model, { ...config, klCoef: 0, tokenBudget: 8192 }, { workers: engine });
    const [first, second] = batches(2);
    await trainer.step(first!, advantagesOf(first!));
    const params = new Map([...model.params].map(([k, v]) => [k, Array.from(v.dataSync())]));
    const state = { steps: trainer.steps, optimizerStep: trainer.optimizer.step, moments: moments(trainer) };
    // worker 1 exits in the second optimizer step of the next Trainer.step: the first one was applied by then
    await engine.run(POISON, 'exitOnForward', [
      { worker: 1, call: 2 },
      { worker: 1, call: 2 },
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
