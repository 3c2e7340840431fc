import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchFromRows, gatherPacked, packRollouts, type RolloutBatch } from '@rlvr/core';
import { advantagesOf, makeBatch, tinyConfig } from './test-utils/batches.js';
import { Qwen3Model, loadModel, microBatchLogprobs, selectBackend, tokenLogprobsReference } from '@rlvr/policy';
import { tf } from './tf.js';
import { Trainer } from './trainer.js';
import { CHECKSUMS, CheckpointStore } from './checkpoint-store.js';
import { clippedSurrogate } from './surrogate.js';
import { TrainerError } from './errors.js';

const config = tinyConfig;

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

function currentLogprobs(model: Qwen3Model, batch: RolloutBatch): Float32Array {
  const rows = Array.from({ length: batch.numRollouts }, (_, i) => i);
  const mb = packRollouts(batch, rows, 0);
  const { logp, entropy } = microBatchLogprobs(model, mb);
  const d = logp.dataSync();
  tf.dispose([logp, entropy]);
  const out = new Float32Array(batch.completionTokens.length);
  rows.forEach((i) => {
    for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++)
      out[t] = d[i * mb.C + t - batch.completionOffsets[i]!]!;
  });
  return out;
}

function maxRelDiff(a: Map<string, tf.Tensor>, b: Map<string, tf.Tensor>): number {
  let worst = 0;
  for (const [k, ta] of a) {
    const x = ta.dataSync();
    const y = b.get(k)!.dataSync();
    let num = 0;
    let den = 0;
    for (let i = 0; i < x.length; i++) {
      num = Math.max(num, Math.abs(x[i]! - y[i]!));
      den = Math.max(den, Math.abs(y[i]!));
    }
    worst = Math.max(worst, num / Math.max(den, 1e-12));
  }
  return worst;
}

describe('Trainer temperature', () => {
  it('computes new and recomputed old log-probs at trainer.temperature: the ratio is 1 at the old parameters', async () => {
    const model = Qwen3Model.random(config, 5, 0.5);
    const batch = makeBatch(4, 2, 3);
    const rows = Array.from({ length: batch.numRollouts }, (_, i) => i);
    const mb = packRollouts(batch, rows, 0);
    // the independent twin: a full log-softmax of logits / 0.7
    const { logp } = microBatchLogprobs(model, mb, { temperature: 0.7 });
    const ref = tf.tidy(() => {
      const ids = tf.tensor2d(mb.ids, [mb.n, mb.S], 'int32');
      const h = tf.slice(
        model.hidden({ ids, attentionMask: tf.tensor2d(mb.attentionMask, [mb.n, mb.S]) }),
        [0, mb.P - 1, 0],
        [mb.n, mb.C, config.hidden_size],
      ) as tf.Tensor3D;
      return tokenLogprobsReference(h, model.lmHeadWeight(), tf.slice(ids, [0, mb.P], [mb.n, mb.C]) as tf.Tensor2D, 0.7).logprobs;
    });
    const a = logp.dataSync();
    const b = ref.dataSync();
    for (let k = 0; k < a.length; k++) if (mb.completionMask[k]) expect(a[k]).toBeCloseTo(b[k]!, 5);
    tf.dispose([logp, ref]);
    // old log-probs at 1 while the new ones are at 0.7: the ratio is off at the old parameters
    const adv = advantagesOf(batch);
    const at1 = currentLogprobs(model, batch);
    const cold = new Trainer(model, { temperature: 0.7, schedule: { type: 'constant', lr: 1e-12 } });
    expect((await cold.step(batch, adv)).metrics['kl/approx']).toBeLessThan(1e-6);
    expect((await cold.step(batch, adv, { oldLogprobs: at1 })).metrics['kl/approx']).toBeGreaterThan(1e-3);
    model.dispose();
  });
});

describe('Trainer gradients', () => {
  it.each(['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'constant'] as const)(
    'accumulating micro-batches equals one big batch (%s)',
    async (aggregation) => {
      const model = Qwen3Model.random(config, 3);
      const batch = makeBatch();
      const rows = Array.from({ length: batch.numRollouts }, (_, i) => i);
      const adv = advantagesOf(batch);
      const old = currentLogprobs(model, batch);
      for (let t = 0; t < old.length; t++) old[t] = old[t]! - 0.05 * Math.sin(t); // ratios away from 1
      const big = await new Trainer(model, { aggregation, tokenBudget: 100_000 }).gradients(batch, rows, adv, old);
      const small = await new Trainer(model, { aggregation, tokenBudget: 12 }).gradients(batch, rows, adv, old);
      expect(small.loss).toBeCloseTo(big.loss, 5);
      expect(maxRelDiff(small.grads, big.grads)).toBeLessThan(1e-4);
      [...big.grads.values(), ...small.grads.values()].forEach((g) => g.dispose());
      model.dispose();
    },
  );

  it("constant's divisor: lossConstantRows 'all' (TRL's dr_grpo) counts every rollout of the batch, 'kept' (default) the trained ones", async () => {
    const model = Qwen3Model.random(config, 4);
    const batch = makeBatch(2, 3, 4); // 12 rollouts
    const kept = [0, 2, 3, 5, 8]; // e.g. the others masked as truncated
    const adv = advantagesOf(batch);
    const old = currentLogprobs(model, batch);
    for (let t = 0; t < old.length; t++) old[t] = old[t]! - 0.05 * Math.cos(t);
    const L = 16;
    const ours = await new Trainer(model, { maxCompletionLength: L }).gradients(batch, kept, adv, old);
    const trl = await new Trainer(model, { maxCompletionLength: L, lossConstantRows: 'all' }).gradients(batch, kept, adv, old);
    // sum(l m) / (5 L) against sum(l m) / (12 L): the same sum, a divisor 12/5 larger
    expect(trl.loss * 12).toBeCloseTo(ours.loss * 5, 6);
    const scaled = new Map([...ours.grads].map(([k, g]) => [k, tf.mul(g, 5 / 12)]));
    expect(maxRelDiff(trl.grads, scaled)).toBeLessThan(1e-5);
    // with 2 mini-batches, all = 12 / 2 rollouts per optimizer step
    const half = await new Trainer(model, { maxCompletionLength: L, lossConstantRows: 'all', miniBatches: 2 }).gradients(
      batch,
      kept,
      adv,
      old,
    );
    expect(half.loss * 6).toBeCloseTo(ours.loss * 5, 6);
    [...ours.grads.values(), ...trl.grads.values(), ...scaled.values(), ...half.grads.values()].forEach((g) => g.dispose());
    model.dispose();
  });

  it('token weights act only through the advantages (stop-gradient)', async () => {
    const model = Qwen3Model.random(config, 4);
    const batch = makeBatch(2, 1, 3);
    const rows = [0, 1, 2];
    const mb = packRollouts(batch, rows, 0);
    const shape: [number, number] = [mb.n, mb.C];
    const mask = tf.tensor2d(mb.completionMask, shape);
    const A = tf.tensor2d(gatherPacked(batch, mb, advantagesOf(batch)), shape);
    const old = tf.tensor2d(gatherPacked(batch, mb, currentLogprobs(model, batch)), shape);
    const opts = { clipLow: 0.2, clipHigh: 0.28, dualClip: null, logRatioClamp: 20 };
    const vars = model.variables();
    // weights computed from the parameters themselves (like saliency weights from the policy)
    const weightsOf = () => tf.exp(tf.mul(microBatchLogprobs(model, mb).entropy, 0.3));
    const withWeights = tf.variableGrads(() => {
      const { logp } = microBatchLogprobs(model, mb);
      return tf.sum(tf.mul(clippedSurrogate(logp, old, tf.mul(A, weightsOf()), opts).loss, mask)) as tf.Scalar;
    }, vars);
    const w = tf.keep(weightsOf());
    const preMultiplied = tf.variableGrads(() => {
      const { logp } = microBatchLogprobs(model, mb);
      return tf.sum(tf.mul(clippedSurrogate(logp, old, tf.mul(A, w), opts).loss, mask)) as tf.Scalar;
    }, vars);
    const a = new Map(Object.entries(withWeights.grads));
    const b = new Map(Object.entries(preMultiplied.grads));
    expect(withWeights.value.dataSync()[0]).toBeCloseTo(preMultiplied.value.dataSync()[0]!, 6);
    expect(maxRelDiff(a, b)).toBeLessThan(1e-5);
    model.dispose();
  });
});

describe('Trainer.step', () => {
  it('raises the log-probs of positively-advantaged tokens and lowers the others', async () => {
    const model = Qwen3Model.random(config, 5);
    const batch = makeBatch(3);
    const adv = advantagesOf(batch);
    const before = currentLogprobs(model, batch);
    const trainer = new Trainer(model, { schedule: { lr: 1e-2 }, epochs: 2, aggregation: 'token-mean' });
    const { metrics } = await trainer.step(batch, adv);
    const after = currentLogprobs(model, batch);
    let up = 0;
    let down = 0;
    for (let t = 0; t < adv.length; t++) {
      if (adv[t]! > 0) up += after[t]! - before[t]!;
      if (adv[t]! < 0) down += after[t]! - before[t]!;
    }
    expect(up).toBeGreaterThan(0);
    expect(down).toBeLessThan(0);
    expect(metrics.optimizer_steps).toBe(2);
    expect(metrics.skipped_updates).toBe(0);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    expect(metrics['kl/approx']).toBeGreaterThan(0); // the second pass sees a moved policy
    expect(metrics.entropy).toBeGreaterThan(0);
    expect(metrics.lr).toBe(1e-2);
    model.dispose();
  });

  it('leaks no tensors over many steps', async () => {
    const model = Qwen3Model.random(config, 6);
    const batch = makeBatch(4);
    const adv = advantagesOf(batch);
    const trainer = new Trainer(model, { tokenBudget: 30, miniBatches: 2 });
    await trainer.step(batch, adv);
    const after1 = tf.memory().numTensors;
    for (let k = 0; k < 10; k++) await trainer.step(batch, adv);
    expect(tf.memory().numTensors).toBe(after1);
    model.dispose();
    trainer.optimizer.dispose();
  });

  it('skips a non-finite update, counts it, names the parameter, and goes on', async () => {
    const model = Qwen3Model.random(config, 7);
    const batch = makeBatch(5);
    const adv = advantagesOf(batch);
    adv[0] = Number.NaN;
    const trainer = new Trainer(model);
    const before = await model.toHost();
    const { metrics } = await trainer.step(batch, adv);
    expect(metrics.skipped_updates).toBe(1);
    expect(metrics.first_nonfinite_param_index).toBeGreaterThanOrEqual(0);
    for (const [k, t] of await model.toHost()) expect(Array.from(t.data)).toEqual(Array.from(before.get(k)!.data));
    adv[0] = 0;
    expect((await trainer.step(batch, adv)).metrics.skipped_updates).toBe(0);
    expect(trainer.skippedUpdates).toBe(1);
    model.dispose();
  });

  it('refreshes advantages on each pass when given a function', async () => {
    const model = Qwen3Model.random(config, 8);
    const batch = makeBatch(6);
    const adv = advantagesOf(batch);
    const passes: number[] = [];
    await new Trainer(model, { epochs: 3 }).step(batch, (pass) => {
      passes.push(pass);
      return adv;
    });
    expect(passes).toEqual([0, 1, 2]);
    model.dispose();
  });

  it('uses caller-supplied old log-probs (the fused saliency pass) exactly like recomputed ones', async () => {
    const batch = makeBatch(12);
    const adv = advantagesOf(batch);
    const a = new Trainer(Qwen3Model.random(config, 13), { epochs: 2 });
    const b = new Trainer(Qwen3Model.random(config, 13), { epochs: 2 });
    await a.step(batch, adv);
    await b.step(batch, adv, { oldLogprobs: currentLogprobs(b.model, batch) });
    const ha = await a.model.toHost();
    for (const [k, t] of await b.model.toHost()) {
      const x = ha.get(k)!.data;
      t.data.forEach((v, i) => expect(v).toBeCloseTo(x[i]!, 6));
    }
    await expect(b.step(batch, adv, { oldLogprobs: new Float32Array(2) })).rejects.toThrow(/oldLogprobs has 2 values/);
  });

  it('adds the KL to a frozen reference policy, which is zero while the policies agree', async () => {
    const batch = makeBatch(14);
    const ref = Qwen3Model.random(config, 15);
    const t = new Trainer(Qwen3Model.random(config, 15), { klCoef: 0.1, epochs: 2, schedule: { lr: 1e-2 } }, { refModel: ref });
    const m1 = (await t.step(batch, advantagesOf(batch))).metrics;
    const m2 = (await t.step(batch, advantagesOf(batch))).metrics;
    expect(m1['kl/ref']).toBeGreaterThanOrEqual(0);
    expect(m1['kl/ref']).toBeLessThan(m2['kl/ref']!); // pass 1 of step 1 has kl exactly 0
    expect(m2['kl/ref']).toBeGreaterThan(0);
  });

  it('validates its inputs and config with clear errors', async () => {
    const model = Qwen3Model.random(config, 9);
    const batch = makeBatch(7);
    await expect(new Trainer(model).step(batch, new Float32Array(3))).rejects.toThrow(
      `advantages has 3 values, expected ${batch.completionTokens.length}`,
    );
    expect(() => new Trainer(model, { clipLow: 2 } as never)).toThrow(/clipLow/);
    expect(() => new Trainer(model, { klCoef: 0.1 })).toThrow(/needs a frozen reference model/);
    await expect(new Trainer(model, { oldLogprobs: 'behavior' }).step(batch, advantagesOf(batch))).rejects.toThrow(
      /needs batch.behaviorLogprobs/,
    );
    const noPrompt = batchFromRows([
      { group: 0, completion: [1, 2], reward: 1 },
      { group: 0, completion: [3], reward: 0 },
    ]);
    await expect(new Trainer(model).step(noPrompt, new Float32Array(3))).rejects.toThrow(TrainerError);
    model.dispose();
  });
});

describe('Trainer checkpoints', () => {
  it('6 steps straight equal 3 steps + save + resume in a fresh trainer + 3 steps', async () => {
    const batches = [0, 1, 2, 3, 4, 5].map((k) => makeBatch(10 + k));
    const cfg = { schedule: { type: 'linear' as const, lr: 5e-3, warmupSteps: 2, totalSteps: 12 }, miniBatches: 2, epochs: 1, seed: 3 };
    const straight = new Trainer(Qwen3Model.random(config, 11), cfg);
    for (const b of batches) await straight.step(b, advantagesOf(b));

    const root = await mkdtemp(join(tmpdir(), 'rlvr-trainer-'));
    const store = new CheckpointStore(root);
    const first = new Trainer(Qwen3Model.random(config, 11), cfg);
    for (const b of batches.slice(0, 3)) await first.step(b, advantagesOf(b));
    const dir = await first.save(store, { cursor: 3 });
    first.model.dispose();

    const resumed = new Trainer(Qwen3Model.random(config, 99), cfg); // different init: restore must overwrite it
    const state = await resumed.restore(store, (await store.latest())!);
    expect(dir).toBe(await store.latest());
    expect(state).toEqual({ cursor: 3 });
    for (const b of batches.slice(state.cursor as number)) await resumed.step(b, advantagesOf(b));
    for (const [k, t] of await straight.model.toHost())
      expect(Array.from((await resumed.model.toHost()).get(k)!.data)).toEqual(Array.from(t.data));
    expect(resumed.steps).toBe(straight.steps);

    // the weights load with @rlvr/policy as a model directory
    const loaded = loadModel(join(dir, 'model'));
    expect(loaded.numParameters()).toBe(straight.model.numParameters());
    await expect(new Trainer(Qwen3Model.random(config, 1), { ...cfg, seed: 4 }).restore(store, dir)).rejects.toThrow(
      /differing fields: seed/,
    );
  });

  it('a NaN is never saved and no good checkpoint is pruned for it; one read from a checkpoint names the tensor and file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rlvr-trainer-nan-'));
    const store = new CheckpointStore(root, 1);
    const b = makeBatch(21);
    const trainer = new Trainer(Qwen3Model.random(config, 5), { schedule: { type: 'constant' as const, lr: 1e-3 }, seed: 1 });
    await trainer.step(b, advantagesOf(b));
    const good = await trainer.save(store);
    await trainer.step(b, advantagesOf(b));
    const [name, v] = [...trainer.model.params][2]!;
    const poisoned = v.dataSync().slice() as Float32Array;
    poisoned[3] = Number.NaN;
    v.assign(tf.tensor(poisoned, v.shape, 'float32'));
    const err = (await trainer.save(store).catch((e: unknown) => e)) as TrainerError;
    expect(err.code).toBe('non_finite');
    expect(err.message).toBe(
      `tensor ${name}: parameter ${name} holds a non-finite value at index 3 after step 2: not saved (the checkpoints already saved are kept)`,
    );
    expect(await readdir(root)).toEqual(['step-000001']);
    expect(await store.latest()).toBe(good);

    // a NaN written into a checkpoint's optimizer state with its sums made to match (as by an older version): refused by name
    const { writeSafetensors, SafetensorsFile } = await import('@rlvr/policy');
    const file = join(good, 'optimizer.safetensors');
    const st = SafetensorsFile.open(file);
    const tensors = new Map([...st.tensors.keys()].map((k) => [k, { ...st.read(k), dtype: 'F32' as const }]));
    const first = [...tensors.keys()][0]!;
    (tensors.get(first)!.data as Float32Array)[0] = Number.POSITIVE_INFINITY;
    writeSafetensors(file, tensors);
    const sums = (await readFile(join(good, CHECKSUMS), 'utf8')).replace(
      /^[0-9a-f]{64}(?= {2}optimizer\.safetensors$)/m,
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
    );
    await writeFile(join(good, CHECKSUMS), sums);
    const restored = new Trainer(Qwen3Model.random(config, 6), { schedule: { type: 'constant' as const, lr: 1e-3 }, seed: 1 });
    const bad = (await restored.restore(store, good).catch((e: unknown) => e)) as TrainerError;
    expect(bad.code).toBe('checkpoint_corrupt');
    expect(bad.message).toBe(`${file}, tensor ${first}: holds Infinity at index 0`);
    trainer.model.dispose();
    restored.model.dispose();
  });
});
