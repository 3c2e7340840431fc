import { beforeAll, describe, expect, test, vi } from 'vitest';
import { defineMethod, prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { batchFromRows, METRIC, SIGNAL_NAMES, Signals, totalTokens, type RolloutBatch, type RolloutRowInput } from '@rlvr/core';
import { PolicyWorkers, Qwen3Model, batchLogprobs, parseModelConfig, selectBackend, type HostTensor } from '@rlvr/policy';
import { GradXEmbConfigSchema, computeSignals, gradXEmbBackend, parseSignalConfig, refreshesSignals } from '@rlvr/saliency';
import { Trainer, resolveRefresh, type AdvantageRefresh } from '@rlvr/trainer';
import { z } from 'zod';
import { signalRefresh } from './refresh.js';

/** What the probe estimator was given, call by call: the entropy and old log-probs it read. */
const seen: { entropy: Float32Array; old: Float32Array }[] = [];
/** An estimator that reads the policy signals only (as entropy shaping does) and records them: A = (r - 0.5) * (1 + H). */
registerEstimator(
  defineMethod({
    name: 'entropy-probe',
    description: 'test: records policy.entropy',
    configSchema: z.strictObject({}),
    needs: [SIGNAL_NAMES.entropy, SIGNAL_NAMES.logprobsOld],
    compute({ batch: b, signals }, out) {
      const entropy = signals.get(SIGNAL_NAMES.entropy);
      seen.push({ entropy: entropy.slice(), old: signals.get(SIGNAL_NAMES.logprobsOld).slice() });
      for (let i = 0; i < b.numRollouts; i++)
        for (let t = b.completionOffsets[i]!; t < b.completionOffsets[i + 1]!; t++) out[t] = (b.rewards[i]! - 0.5) * (1 + entropy[t]!);
      return {};
    },
  }),
);

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

const tiny = parseModelConfig({
  vocab_size: 40,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  max_position_embeddings: 64,
});

/** Two groups of four rollouts, each with a boxed answer (open 1, content 2..4, close 4) and reasoning around it. */
function batch(): RolloutBatch {
  const rows: RolloutRowInput[] = [];
  const rewards = [1, 0, 0, 1, 0, 1, 0, 0];
  for (let i = 0; i < 8; i++) {
    const g = i < 4 ? 0 : 1;
    const completion = Array.from({ length: 7 + (i % 3) }, (_, t) => 1 + ((i * 7 + t * 5 + g) % 39));
    rows.push({
      group: g,
      prompt: [3 + g, 9, 14],
      completion,
      reward: rewards[i]!,
      spans: { open: [1, 2], content: [2, 4], close: [4, 5] },
    });
  }
  return batchFromRows(rows);
}

/** What GRAIL's advantages are with `params`, computed from scratch: the backend on the whole batch, then the estimator. */
async function independent(params: Map<string, HostTensor>, b: RolloutBatch): Promise<Float32Array> {
  const model = Qwen3Model.fromWeights(tiny, (name) => params.get(name)!);
  try {
    const scores = (await gradXEmbBackend.compute(model, b, GradXEmbConfigSchema.parse({}))).scores;
    return prepareEstimator('grail').estimate(b, new Signals(totalTokens(b)).set(gradXEmbBackend.signal, scores)).advantages;
  } finally {
    model.dispose();
  }
}

/** Copies of the parameters of `model`. */
async function hostParams(model: Qwen3Model): Promise<Map<string, Float32Array>> {
  return new Map([...(await model.toHost())].map(([k, t]) => [k, Float32Array.from(t.data)]));
}

/** max |a - b| over the completion tokens of `rows`. */
function maxDiff(b: RolloutBatch, rows: readonly number[], x: Float32Array, y: Float32Array): number {
  let m = 0;
  for (const i of rows)
    for (let t = b.completionOffsets[i]!; t < b.completionOffsets[i + 1]!; t++) m = Math.max(m, Math.abs(x[t]! - y[t]!));
  return m;
}

describe('saliency.refresh: the advantage refresh of rlvr train', () => {
  test('minibatch: the advantages of the k-th update are the estimator on signals computed with the parameters of that moment', async () => {
    const b = batch();
    const model = Qwen3Model.random(tiny, 5, 0.3);
    const estimator = prepareEstimator('grail');
    const plan = parseSignalConfig({ refresh: 'minibatch' }, estimator.needs, { estimator: 'grail' });
    expect(plan.refresh).toBe('minibatch');
    const { signals, oldLogprobs } = await computeSignals(model, b, plan, { padId: 0, tokenBudget: 4096 });
    const given = estimator.estimate(b, signals).advantages;
    expect(maxDiff(b, [...Array(8).keys()], given, await independent(await model.toHost(), b))).toBeLessThan(1e-6);

    const refresh = await signalRefresh({ every: 'minibatch', estimator: 'grail', saliency: { refresh: 'minibatch' } });
    refresh.useSignals(b, signals);
    const calls: { rows: number[]; params: Map<string, HostTensor>; adv: Float32Array }[] = [];
    const recording: AdvantageRefresh = {
      every: refresh.every,
      spec: refresh.spec,
      async advantages(m, bb, rows, ctx) {
        const params = new Map([...(await m.toHost())].map(([k, t]) => [k, { shape: t.shape, data: t.data.slice() }]));
        const adv = await refresh.advantages(m, bb, rows, ctx);
        calls.push({ rows: [...rows], params, adv });
        return adv;
      },
    };
    const trainer = new Trainer(model, { epochs: 2, miniBatches: 2, schedule: { lr: 3e-2 }, maxGradNorm: 100 });
    const { metrics } = await trainer.step(b, given, { oldLogprobs: oldLogprobs!, refresh: recording });
    expect(calls).toHaveLength(3); // updates 2, 3 and 4 of the step; the first uses `given`
    expect(metrics[METRIC.refreshCount]).toBe(3);
    expect(metrics[METRIC.refreshChange]).toBeGreaterThan(0);
    for (const [k, c] of calls.entries()) {
      const expected = await independent(c.params, b);
      const scale = Math.max(...Array.from(expected, Math.abs));
      expect(maxDiff(b, c.rows, c.adv, expected) / scale, `update ${k + 2}`).toBeLessThan(1e-5);
      // the parameters moved, and GRAIL's weights with them: not the advantages of the behaviour pass
      expect(maxDiff(b, c.rows, c.adv, given) / scale, `update ${k + 2}`).toBeGreaterThan(1e-3);
    }
    model.dispose();
  });

  test('minibatch on policy workers: the signals are refreshed there; 1 worker bit-identical, 2 within 1e-5, the same refresh count', async () => {
    // the workers load the saliency and trainer tasks from dist/: build those packages first
    const b = batch();
    const estimator = prepareEstimator('grail');
    const plan = parseSignalConfig({ refresh: 'minibatch' }, estimator.needs, { estimator: 'grail' });
    const run = async (workers: number | null) => {
      const model = Qwen3Model.random(tiny, 7, 0.3);
      const engine = workers === null ? undefined : await PolicyWorkers.start(model, { workers });
      try {
        const { signals, oldLogprobs } = await computeSignals(model, b, plan, { padId: 0, tokenBudget: 4096 });
        const given = estimator.estimate(b, signals).advantages;
        const refresh = await signalRefresh({ every: 'minibatch', estimator: 'grail', saliency: { refresh: 'minibatch' } });
        refresh.useSignals(b, signals);
        const here = vi.spyOn(refresh, 'advantages');
        const there = vi.spyOn(refresh, 'advantagesOnWorkers');
        const trainer = new Trainer(
          model,
          { epochs: 2, miniBatches: 2, schedule: { lr: 3e-2 }, maxGradNorm: 100 },
          engine ? { workers: engine } : {},
        );
        const { metrics } = await trainer.step(b, given, { oldLogprobs: oldLogprobs!, refresh });
        const params = await hostParams(model);
        return { params, metrics, calls: { here: here.mock.calls.length, there: there.mock.calls.length } };
      } finally {
        await engine?.close();
        model.dispose();
      }
    };
    const maxRel = (x: Map<string, Float32Array>, y: Map<string, Float32Array>) =>
      Math.max(
        ...[...x].map(([k, a]) => {
          const c = y.get(k)!;
          return Math.max(...a.map((v, i) => Math.abs(v - c[i]!))) / Math.max(...c.map(Math.abs));
        }),
      );
    const inProcess = await run(null);
    expect(inProcess.calls).toEqual({ here: 3, there: 0 });
    expect(inProcess.metrics[METRIC.refreshCount]).toBe(3);
    const one = await run(1);
    expect(one.calls).toEqual({ here: 0, there: 3 });
    for (const [k, x] of inProcess.params) expect(Array.from(one.params.get(k)!), k).toEqual(Array.from(x));
    const two = await run(2);
    expect(two.calls).toEqual({ here: 0, there: 3 });
    expect(maxRel(two.params, inProcess.params)).toBeLessThan(1e-5);
    for (const r of [one, two]) expect(r.metrics[METRIC.refreshCount]).toBe(3);
    // the parameters moved: the comparison means something
    const initial = Qwen3Model.random(tiny, 7, 0.3);
    expect(maxRel(inProcess.params, await hostParams(initial))).toBeGreaterThan(1e-3);
    initial.dispose();
  });

  test('minibatch without a saliency backend: the estimator reads policy.entropy of the parameters of that moment, the behaviour old log-probs', async () => {
    const b = batch();
    const model = Qwen3Model.random(tiny, 8, 0.3);
    const estimator = prepareEstimator('entropy-probe');
    const plan = parseSignalConfig({ refresh: 'minibatch' }, estimator.needs, { estimator: 'entropy-probe' });
    expect(plan.sources).toEqual([]);
    // rlvr train hands the trainer a refresh for it (open.ts), but none with the default refresh
    expect(refreshesSignals(plan)).toBe(true);
    expect(refreshesSignals(parseSignalConfig({}, estimator.needs))).toBe(false);
    const { signals, oldLogprobs } = await computeSignals(model, b, plan, { padId: 0, tokenBudget: 4096 });
    seen.length = 0;
    const given = estimator.estimate(b, signals).advantages;
    const behaviour = seen[0]!.entropy;
    const refresh = await signalRefresh({ every: 'minibatch', estimator: 'entropy-probe', saliency: { refresh: 'minibatch' } });
    refresh.useSignals(b, signals);
    const calls: { rows: number[]; current: Float32Array }[] = [];
    const recording: AdvantageRefresh = {
      every: refresh.every,
      spec: refresh.spec,
      async advantages(m, bb, rows, ctx) {
        // independently: the whole batch's entropy with the parameters of this moment, one forward pass
        calls.push({ rows: [...rows], current: (await batchLogprobs(m, bb, { tokenBudget: 1 << 20 })).entropy });
        return refresh.advantages(m, bb, rows, ctx);
      },
    };
    const trainer = new Trainer(model, { epochs: 2, miniBatches: 2, schedule: { lr: 3e-2 }, maxGradNorm: 100, tokenBudget: 64 });
    const { metrics } = await trainer.step(b, given, { oldLogprobs: oldLogprobs!, refresh: recording });
    expect(calls).toHaveLength(3); // updates 2, 3 and 4; the first uses `given`
    expect(seen).toHaveLength(4);
    expect(metrics[METRIC.refreshChange]).toBeGreaterThan(0);
    for (const [k, c] of calls.entries()) {
      const { entropy, old } = seen[k + 1]!;
      const others = [...Array(8).keys()].filter((i) => !c.rows.includes(i));
      expect(maxDiff(b, c.rows, entropy, c.current), `update ${k + 2}`).toBeLessThan(1e-5);
      expect(maxDiff(b, c.rows, entropy, behaviour), `update ${k + 2}`).toBeGreaterThan(1e-3);
      expect(maxDiff(b, others, entropy, behaviour), `update ${k + 2}`).toBe(0);
      // the importance ratio's denominator stays the behaviour policy's
      expect(Array.from(old), `update ${k + 2}`).toEqual(Array.from(oldLogprobs!));
    }
    // refresh off (batch): the trainer gets no refresh, and the step's one estimate read the behaviour policy's entropy
    const initial = Qwen3Model.random(tiny, 8, 0.3);
    expect(maxDiff(b, [...Array(8).keys()], behaviour, (await batchLogprobs(initial, b, { tokenBudget: 1 << 20 })).entropy)).toBeLessThan(
      1e-5,
    );
    initial.dispose();
    model.dispose();
  });

  test('the entropy refresh on policy workers: what the estimator reads, 1 worker bit-identical, 2 within 1e-5', async () => {
    const b = batch();
    const estimator = prepareEstimator('entropy-probe');
    const plan = parseSignalConfig({ refresh: 'minibatch' }, estimator.needs, { estimator: 'entropy-probe' });
    const run = async (workers: number | null) => {
      const model = Qwen3Model.random(tiny, 9, 0.3);
      const engine = workers === null ? undefined : await PolicyWorkers.start(model, { workers });
      try {
        const { signals, oldLogprobs } = await computeSignals(model, b, plan, { padId: 0, tokenBudget: 4096 });
        seen.length = 0;
        const refresh = await signalRefresh({ every: 'minibatch', estimator: 'entropy-probe', saliency: { refresh: 'minibatch' } });
        refresh.useSignals(b, signals);
        const there = vi.spyOn(refresh, 'advantagesOnWorkers');
        const cfg = { epochs: 2, miniBatches: 2, schedule: { lr: 3e-2 }, maxGradNorm: 100 };
        await new Trainer(model, cfg, engine ? { workers: engine } : {}).step(b, estimator.estimate(b, signals).advantages, {
          oldLogprobs: oldLogprobs!,
          refresh,
        });
        return { seen: seen.map((x) => x.entropy), onWorkers: there.mock.calls.length };
      } finally {
        await engine?.close();
        model.dispose();
      }
    };
    const here = await run(null);
    expect(here.seen).toHaveLength(4);
    expect(here.onWorkers).toBe(0);
    const one = await run(1);
    expect(one.onWorkers).toBe(3);
    for (const [k, h] of here.seen.entries()) expect(Array.from(one.seen[k]!), `estimate ${k}`).toEqual(Array.from(h));
    const two = await run(2);
    expect(two.onWorkers).toBe(3);
    for (const [k, h] of here.seen.entries()) expect(maxDiff(b, [...Array(8).keys()], two.seen[k]!, h), `estimate ${k}`).toBeLessThan(1e-5);
    // the refreshes read entropies that moved: the comparison means something
    expect(maxDiff(b, [...Array(8).keys()], here.seen[3]!, here.seen[0]!)).toBeGreaterThan(1e-3);
  });

  test('is described as data: resolveRefresh builds the same refresh from its spec', async () => {
    const b = batch();
    const model = Qwen3Model.random(tiny, 6, 0.3);
    const refresh = await signalRefresh({ every: 'epoch', estimator: 'grail', estimatorConfig: { symmetry: 'both' } });
    const again = await resolveRefresh(JSON.parse(JSON.stringify(refresh.spec)));
    expect(again.every).toBe('epoch');
    const plan = parseSignalConfig({}, prepareEstimator('grail').needs);
    const { signals } = await computeSignals(model, b, plan, { padId: 0, tokenBudget: 4096 });
    refresh.useSignals(b, signals);
    (again as typeof refresh).useSignals(b, signals);
    const ctx = { pass: 1, miniBatch: 0, padId: 0, tokenBudget: 4096 };
    expect(Array.from(await again.advantages(model, b, [1, 2, 5], ctx))).toEqual(
      Array.from(await refresh.advantages(model, b, [1, 2, 5], ctx)),
    );
    // a batch it was not given signals for is refused, not silently computed from stale ones
    await expect(refresh.advantages(model, batch(), [0], ctx)).rejects.toThrow(/not given this batch's signals/);
    model.dispose();
  });

  test('bad options are refused by the factory, naming the field', async () => {
    await expect(signalRefresh({ every: 'sometimes', estimator: 'grail' })).rejects.toThrow(/every/);
    expect(() => parseSignalConfig({ refresh: 'step' }, prepareEstimator('grail').needs)).toThrow(
      /saliency\.refresh.*must be one of "batch", "epoch", "minibatch", got "step"/,
    );
  });
});
