import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Signals, type RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { z } from 'zod';
import { defineBackend } from './backend.js';
import { computeSaliency, saliencyBackends } from './registry.js';
import type { SaliencyResult } from './result.js';
import { computeSignals, parseSignalConfig, refreshSignals } from './signals.js';
import { fixtureBatch, tinyModel, useBackend } from './test-utils/fixtures.js';

const batch = fixtureBatch();
const pass = { padId: 0, tokenBudget: 8192 };
const SIGNAL = 'test.asyncLength';

/** Per rollout: its completion length times `scale`, answered after a turn of the event loop (as a server would). */
async function lengths(b: RolloutBatch, scale: number): Promise<SaliencyResult> {
  await new Promise((resolve) => setImmediate(resolve));
  const o = b.completionOffsets;
  const scores = Float32Array.from({ length: b.numRollouts }, (_, i) => (o[i + 1]! - o[i]!) * scale);
  return { signal: SIGNAL, scores, hasScores: new Uint8Array(b.numRollouts).fill(1), missing: 0 };
}

const Options = z.strictObject({ scale: z.number().default(1), fail: z.boolean().default(false) });

// a model backend (the signal step finds producers among those) that reads no model and answers later
saliencyBackends.register(
  defineBackend({
    name: 'test-async-length',
    signal: SIGNAL,
    shape: 'rollout',
    configSchema: Options,
    async run(_model, b, config) {
      if (config.fail) {
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('the server said no');
      }
      return lengths(b, config.scale);
    },
  }),
);
saliencyBackends.register(
  defineBackend({
    name: 'test-async-data',
    signal: SIGNAL,
    shape: 'rollout',
    configSchema: Options,
    needsModel: false,
    run: (b: RolloutBatch, config: z.output<typeof Options>) => lengths(b, config.scale),
  }),
);

// scores from the text only (a process reward model, say): a refresh keeps them
let textCalls = 0;
saliencyBackends.register(
  defineBackend({
    name: 'test-text-length',
    signal: 'test.textLength',
    shape: 'rollout',
    configSchema: Options,
    readsParameters: false,
    async run(_model, b, config) {
      textCalls++;
      return { ...(await lengths(b, config.scale)), signal: 'test.textLength' };
    },
  }),
);
// a vector per rollout whose width is the number of rollouts asked about: a refresh of some rows changes it
saliencyBackends.register(
  defineBackend({
    name: 'test-batch-width',
    signal: 'test.batchWidth',
    shape: 'rollout',
    configSchema: Options,
    run: (_model: Qwen3Model, b: RolloutBatch) => ({
      signal: 'test.batchWidth',
      width: b.numRollouts,
      scores: new Float32Array(b.numRollouts * b.numRollouts),
      hasScores: new Uint8Array(b.numRollouts).fill(1),
      missing: 0,
    }),
  }),
);

const o = batch.completionOffsets;
const want = (scale: number) => Array.from({ length: batch.numRollouts }, (_, i) => (o[i + 1]! - o[i]!) * scale);

describe('asynchronous backends', () => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend('cpu');
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it('computeSaliency awaits a data backend whose run returns a promise, and stores its per-rollout scores', async () => {
    const { result, signals } = await computeSaliency('test-async-data', null, batch, { scale: 2 });
    expect(Array.from(result.scores)).toEqual(want(2));
    expect(Array.from(signals.getPerRollout(SIGNAL).values)).toEqual(want(2));
  });

  it('computeSignals awaits an asynchronous model backend; refreshSignals recomputes only the rows asked', async () => {
    const plan = parseSignalConfig({ 'test-async-length': { scale: 3 } }, [SIGNAL]);
    const { signals, results } = await computeSignals(model, batch, plan, pass);
    expect(Array.from(results['test-async-length']!.scores)).toEqual(want(3));
    expect(Array.from(signals.getPerRollout(SIGNAL).values)).toEqual(want(3));
    const base = Signals.forBatch(batch);
    base.setPerRollout(SIGNAL, new Float32Array(batch.numRollouts).fill(-1), 1);
    const refreshed = await refreshSignals(model, batch, [2, 0], plan, base);
    const expected = want(3).map((v, i) => ([0, 2].includes(i) ? v : -1));
    expect(Array.from(refreshed.getPerRollout(SIGNAL).values)).toEqual(expected);
  });

  it('a backend with readsParameters: false is not run again by a refresh: its scores stay as the behaviour pass gave them', async () => {
    const plan = parseSignalConfig({}, ['test.textLength']);
    const { signals } = await computeSignals(model, batch, plan, pass);
    expect(textCalls).toBe(1);
    const refreshed = await refreshSignals(model, batch, [2, 0], plan, signals);
    expect(textCalls).toBe(1);
    expect(Array.from(refreshed.getPerRollout('test.textLength').values)).toEqual(want(1));
    // mixed with a backend that reads the parameters: only that one runs again
    const both = parseSignalConfig({ 'test-async-length': { scale: 3 } }, ['test.textLength', SIGNAL]);
    const base = (await computeSignals(model, batch, both, pass)).signals;
    base.setPerRollout(SIGNAL, new Float32Array(batch.numRollouts).fill(-1), 1);
    const again = await refreshSignals(model, batch, [1], both, base);
    expect(textCalls).toBe(2);
    expect(Array.from(again.getPerRollout(SIGNAL).values)).toEqual(want(3).map((v, i) => (i === 1 ? v : -1)));
    expect(Array.from(again.getPerRollout('test.textLength').values)).toEqual(want(1));
  });

  it("a refresh that would change a per-rollout signal's width is refused, naming the backend and both widths", async () => {
    const plan = parseSignalConfig({}, ['test.batchWidth']);
    const { signals } = await computeSignals(model, batch, plan, pass);
    expect(signals.getPerRollout('test.batchWidth').width).toBe(batch.numRollouts);
    await expect(refreshSignals(model, batch, [2, 0], plan, signals)).rejects.toMatchObject({
      name: 'SaliencyError',
      code: 'invalid_scores',
      message: expect.stringContaining(
        `field test.batchWidth: saliency backend test-batch-width gave 2 values per rollout for the refreshed rows, but the batch's signal has ${batch.numRollouts}`,
      ),
    });
  });

  it("a backend's rejection, and a bad option, reject computeSignals and computeSaliency (nothing thrown synchronously)", async () => {
    const plan = parseSignalConfig({ 'test-async-length': { fail: true } }, [SIGNAL]);
    await expect(computeSignals(model, batch, plan, pass)).rejects.toThrow('the server said no');
    const pending = computeSaliency('test-async-data', null, batch, { scale: 'x' });
    await expect(pending).rejects.toThrow('scale');
  });
});
