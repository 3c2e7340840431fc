import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { parseModelConfig } from '../config.js';
import { Qwen3Model } from '../model.js';
import { selectBackend } from '../backend.js';
import { PolicyWorkers, compiledModuleUrl } from './engine.js';
import { paramLayout } from './layout.js';

// Tasks are plain .mjs: a worker cannot run TypeScript. The worker entry itself is loaded from dist/ (build first).
const TASKS = new URL('./test-utils/tasks.mjs', import.meta.url).href;

const config = parseModelConfig({
  vocab_size: 32,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  max_position_embeddings: 32,
});
const ids = [3, 7, 1, 30, 12];

function mainLogits(model: Qwen3Model): number[] {
  const out = tf.tidy(() => model.logits({ ids: tf.tensor2d(ids, [1, ids.length], 'int32') }));
  const d = Array.from(out.dataSync());
  out.dispose();
  return d;
}

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

describe('PolicyWorkers', () => {
  let engine: PolicyWorkers;
  let model: Qwen3Model;
  beforeAll(async () => {
    model = Qwen3Model.random(config, 3, 0.3);
    engine = await PolicyWorkers.start(model, { workers: 2 });
  });
  afterAll(async () => {
    await engine.close();
  });

  it("gives every worker a replica with the published weights, on the calling thread's backend, results in worker order", async () => {
    const out = await engine.run<{ ids: number[] }, { index: number; workers: number; backend: string; data: number[] }>(TASKS, 'logits', [
      { ids },
      { ids },
    ]);
    expect(out.map((o) => o.index)).toEqual([0, 1]);
    expect(out.every((o) => o.workers === 2 && o.backend === 'cpu')).toBe(true);
    const want = mainLogits(model);
    for (const o of out) expect(o.data).toEqual(want);
  });

  it('re-loads the replicas after a publish, and only then', async () => {
    const before = mainLogits(model);
    const w = model.params.get('model.norm.weight')!;
    const old = w.clone();
    w.assign(tf.mul(old, 1.5));
    const stale = await engine.run<{ ids: number[] }, { data: number[] }>(TASKS, 'logits', [{ ids }, { ids }]);
    expect(stale[0]!.data).toEqual(before);
    expect(engine.lastRun!.reload).toEqual([0, 0]);
    expect(await engine.publish(model)).toBeGreaterThan(0);
    // nothing assigned since: a second publish is free and re-loads nothing
    const count = engine.syncStats.publishes;
    expect(await engine.publish(model)).toBe(0);
    expect(engine.syncStats.publishes).toBe(count);
    const fresh = await engine.run<{ ids: number[] }, { data: number[] }>(TASKS, 'logits', [{ ids }, { ids }]);
    const want = mainLogits(model);
    expect(want).not.toEqual(before);
    expect(fresh.map((o) => o.data)).toEqual([want, want]);
    expect(engine.lastRun!.reload.every((s) => s > 0)).toBe(true);
    const reloaded = engine.syncStats.reloadSeconds;
    expect(reloaded).toBeGreaterThanOrEqual(Math.max(...engine.lastRun!.reload));
    await engine.run(TASKS, 'logits', [{ ids }, { ids }]);
    expect(engine.syncStats.reloadSeconds).toBe(reloaded);
    expect(engine.lastRun!.reload).toEqual([0, 0]);
    w.assign(old);
    old.dispose();
    await engine.publish(model);
  });

  it('hands each worker its own gradient buffer in the parameter layout', async () => {
    const totals = await engine.run<number, number>(TASKS, 'fillGradients', [10, 10]);
    const layout = paramLayout(config);
    expect(totals).toEqual([layout.total, layout.total]);
    expect(engine.gradients(0).length).toBe(layout.total);
    expect([engine.gradients(0)[0], engine.gradients(0)[layout.total - 1], engine.gradients(1)[0]]).toEqual([10, 10, 11]);
    expect(layout.slots.map((s) => s.name)).toEqual([...model.params.keys()]);
  });

  it("starts each worker on the backend asked for (wasm here), independent of the calling thread's", async () => {
    const wasm = await PolicyWorkers.start(model, { workers: 1, backend: 'wasm' });
    const [o] = await wasm.run<{ ids: number[] }, { backend: string; data: number[] }>(TASKS, 'logits', [{ ids }]);
    await wasm.close();
    expect(o!.backend).toBe('wasm');
    const want = mainLogits(model);
    for (let i = 0; i < want.length; i++) expect(o!.data[i]).toBeCloseTo(want[i]!, 4);
  });

  it('refuses a wrong number of inputs and a model of another config', async () => {
    expect(() => engine.run(TASKS, 'logits', [{ ids }])).toThrow('run needs one input per worker: got 1, the engine has 2');
    await expect(engine.publish(Qwen3Model.random({ ...config, hidden_size: 8, head_dim: 4 }))).rejects.toThrow(/another config/);
  });
});

describe('PolicyWorkers failures', () => {
  let model: Qwen3Model;
  beforeAll(() => {
    model = Qwen3Model.random(config, 4, 0.3);
  });

  it("a task that throws rejects the run with that worker's error, and the engine is closed", async () => {
    const engine = await PolicyWorkers.start(model, { workers: 2 });
    const err = await engine.run(TASKS, 'throwIn', [1, 1]).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'policy worker 1 of 2 threw RangeError: bad input in worker 1; the engine is closed, start a new one',
    );
    expect(((err as Error).cause as Error).stack).toMatch(/tasks\.mjs/);
    expect(engine.usable).toBe(false);
    expect(() => engine.run(TASKS, 'logits', [{ ids }, { ids }])).toThrow(
      /unusable after a failure \(policy worker 1 of 2 threw.*start a new engine/,
    );
    await engine.close();
  });

  it('a worker that exits mid-task rejects the run naming it', async () => {
    const engine = await PolicyWorkers.start(model, { workers: 2 });
    await expect(engine.run(TASKS, 'exitIn', [0, 0])).rejects.toThrow(
      'policy worker 0 of 2 exited with code 3; the engine is closed, start a new one',
    );
    await engine.close();
  });

  it('a worker that crashes outside its task rejects the run instead of hanging', async () => {
    const engine = await PolicyWorkers.start(model, { workers: 2 });
    await expect(engine.run(TASKS, 'crashIn', [1, 1])).rejects.toThrow(/policy worker 1 of 2 crashed: Error: uncaught in a timer/);
    await engine.close();
  });

  it('close() mid-run rejects the run', async () => {
    const engine = await PolicyWorkers.start(model, { workers: 1 });
    // a task that never answers: only close() can end this run
    const run = expect(engine.run(TASKS, 'crashIn', [-1])).rejects.toThrow('the policy workers were closed during the run');
    await engine.close();
    await run;
  });

  it('a result that cannot be cloned, or a missing export, fails the run with a clear error', async () => {
    const a = await PolicyWorkers.start(model, { workers: 1 });
    await expect(a.run(TASKS, 'unclonable', [null])).rejects.toThrow(/policy worker 0 of 1 threw DataCloneError/);
    const b = await PolicyWorkers.start(model, { workers: 1 });
    await expect(b.run(TASKS, 'nope', [null])).rejects.toThrow(/threw TypeError: .*tasks\.mjs has no function export nope/);
    await Promise.all([a.close(), b.close()]);
  });

  it('rejects a bad worker count, and maps a source URL to the built file', async () => {
    await expect(PolicyWorkers.start(model, { workers: 0 })).rejects.toThrow('workers must be an integer >= 1, got 0');
    expect(compiledModuleUrl(new URL('./worker.js', import.meta.url))).toMatch(/\/packages\/policy\/dist\/workers\/worker\.js$/);
    expect(() => compiledModuleUrl(new URL('./nothing.js', import.meta.url))).toThrow(
      /nothing\.js does not exist .*build the package first/,
    );
  });
});
