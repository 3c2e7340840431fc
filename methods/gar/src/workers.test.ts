import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchFromRows, type RolloutBatch } from '@rlvr/core';
import { PolicyWorkers, type Qwen3Model, selectBackend, splitRollouts } from '@rlvr/policy';
import { computeSignals, computeSignalsOnWorkers, defineBackend, parseSignalConfig, saliencyBackends } from '@rlvr/saliency';
import { garBackend } from './backend.js';
import { GAR_COSINE, GarBackendConfigSchema, garCosines } from './index.js';
import { tinyModel } from './test-utils/tiny-model.js';

// The workers import the backend from dist/ (a worker cannot run TypeScript): build first (tsc -b; nx builds before tests).
const pass = { padId: 0, tokenBudget: 8192 };
saliencyBackends.register(garBackend(defineBackend)); // what the plugin's register does

const REFS = [
  [5, 9, 9, 2, 17],
  [4, 4, 8],
  [11, 12, 13, 14],
];
/**
 * Three groups of 4 (rollout 3 has no completion tokens; rollout 5 equals its reference), the references as
 * given (undefined: none): the 2-worker split cuts group 1 in two (checked below).
 */
function batch(refs: (number[] | undefined)[] = Array.from({ length: 12 }, (_, i) => REFS[Math.floor(i / 4)])): RolloutBatch {
  const completions = [
    [5, 9, 1],
    [5, 9, 9, 2, 17],
    [20, 3, 3, 3, 11, 6, 2],
    [],
    [4, 1],
    [4, 4, 8],
    [8, 8, 8, 8],
    [2, 6],
    [11],
    [11, 12, 1, 1, 7],
    [3, 3],
    [19, 18, 17, 16],
  ];
  return batchFromRows(
    completions.map((completion, i) => ({
      group: Math.floor(i / 4),
      prompt: [
        [1, 2, 3],
        [7, 3],
        [6, 6, 6, 2],
      ][Math.floor(i / 4)]!,
      completion,
      reward: i % 2,
      ...(refs[i] === undefined ? {} : { reference: refs[i] }),
    })),
  );
}

const maxAbs = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let k = 0; k < a.length; k++) m = Math.max(m, Math.abs(a[k]! - b[k]!));
  return m;
};

// rlvr train's default (wasm) and cpu. The tolerance of 2 workers against the main thread: a worker packs its
// share's micro-batches (and a split group's reference) with other rows than the whole batch does, so the
// padded shapes differ, and nothing promises the float32 sums the same order (on this batch they came out
// equal, bit for bit, on both backends); the cosines are of order 1 and float32 keeps about 7 digits, so 1e-5
// absolute is float rounding with room, while a wrong row or a wrong group's reference is off by far more.
describe.each(['cpu', 'wasm'] as const)('gar on policy workers (%s)', (backend) => {
  let model: Qwen3Model;
  let one: PolicyWorkers;
  let two: PolicyWorkers;
  beforeAll(async () => {
    await selectBackend({ backend });
    model = tinyModel();
    [one, two] = await Promise.all([PolicyWorkers.start(model, { workers: 1 }), PolicyWorkers.start(model, { workers: 2 })]);
  });
  afterAll(async () => {
    await Promise.all([one.close(), two.close()]);
    model.dispose();
  });

  it('gar.cosine on 2 workers equals the main thread within float rounding, every rollout scored; 1 worker bit for bit', async () => {
    const b = batch();
    // the split cuts group 1 in two: both workers compute its reference
    const [first, second] = splitRollouts(
      b,
      Array.from({ length: b.numRollouts }, (_, i) => i),
      2,
    );
    expect(first!.length).toBeGreaterThan(0);
    expect(second!.length).toBeGreaterThan(0);
    expect(b.groupIndex[first!.at(-1)!]).toBe(b.groupIndex[second![0]!]);

    const plan = parseSignalConfig({}, [GAR_COSINE]);
    const main = await computeSignals(model, b, plan, pass);
    const direct = await garCosines(model, b, GarBackendConfigSchema.parse({}));
    expect(main.results.gar!.scores).toEqual(direct.scores); // the main thread runs garCosines on the whole batch

    const before = two.lastRun;
    const got = await computeSignalsOnWorkers(two, model, b, plan, pass);
    // it ran on both workers (with GAR's fused pass and nothing else, a main-thread GAR runs no worker task)
    expect(two.lastRun).not.toBe(before);
    expect(two.lastRun!.task.every((s) => s > 0)).toBe(true);
    const r = got.results.gar!;
    const w = main.results.gar!;
    expect(Array.from(r.hasScores)).toEqual([1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1]); // every rollout with tokens
    expect(Array.from(r.hasScores)).toEqual(Array.from(w.hasScores));
    expect(r.missing).toBe(1);
    expect(maxAbs(r.scores, w.scores)).toBeLessThan(1e-5);
    expect(r.scores[5]).toBeCloseTo(1, 5); // equal to its reference, in the group the split cuts
    expect(maxAbs(r.logprobs!, w.logprobs!)).toBeLessThan(1e-5);
    expect(maxAbs(r.entropy!, w.entropy!)).toBeLessThan(1e-5);
    expect(got.oldLogprobs).toEqual(r.logprobs); // the fused pass gives the step's old log-probs
    expect(maxAbs(got.signals.getPerRollout(GAR_COSINE).values, main.signals.getPerRollout(GAR_COSINE).values)).toBeLessThan(1e-5);

    // one worker holds the whole batch: the same code on the same rows, bit for bit
    const all = await computeSignalsOnWorkers(one, model, b, plan, pass);
    expect(all.results.gar).toEqual(w);
  });

  it('a missing reference is still the typed error naming the rollout (on a worker too, by its index in the batch)', async () => {
    const plan = parseSignalConfig({}, [GAR_COSINE]);
    const refs: (number[] | undefined)[] = Array.from({ length: 12 }, (_, i) => REFS[Math.floor(i / 4)]);
    refs[10] = undefined; // rollout 10, in the second worker's share
    const b = batch(refs);
    const [first] = splitRollouts(
      b,
      Array.from({ length: b.numRollouts }, (_, i) => i),
      2,
    );
    const main = "rollout 10, field referenceTokens: saliency backend gar needs a reference solution, but this rollout's problem has none";
    await expect(computeSignals(model, b, plan, pass)).rejects.toMatchObject({
      name: 'CoreError',
      code: 'missing_reference',
      message: main,
    });
    // a worker sees its share only; the error names the rollout as the batch numbers it
    const engine = await PolicyWorkers.start(model, { workers: 2 }); // a failed run closes its engine
    try {
      const e = await computeSignalsOnWorkers(engine, model, b, plan, pass).then(
        () => null,
        (err: unknown) => err as Error & { code: string; cause: Error & { code: string } },
      );
      expect(e).toMatchObject({ name: 'PolicyError', code: 'worker_failed' });
      expect(e!.message).toContain(`policy worker 1 of 2 threw CoreError: ${main}; the engine is closed`);
      expect(e!.cause).toMatchObject({ name: 'CoreError', code: 'missing_reference' });
    } finally {
      await engine.close();
    }
    // a batch without references at all
    const none = batch(Array.from({ length: 12 }, () => undefined));
    await expect(computeSignals(model, none, plan, pass)).rejects.toThrow(
      /^rollout 0, field referenceTokens: saliency backend gar needs each rollout's reference solution, but the batch carries none/,
    );
    const again = await PolicyWorkers.start(model, { workers: 2 });
    try {
      await expect(computeSignalsOnWorkers(again, model, none, plan, pass)).rejects.toMatchObject({
        code: 'worker_failed',
        message: expect.stringMatching(
          new RegExp(
            `threw CoreError: rollout (0|${first!.length}), field referenceTokens: saliency backend gar needs each rollout's reference solution, but the batch carries none`,
          ),
        ),
        cause: { code: 'missing_reference' },
      });
    } finally {
      await again.close();
    }
  });
});
