/**
 * `saliency.refresh` against the GRAIL reference's weight refresh, ported to NumPy
 * (`tools/fixtures/advantages/reference_refresh.py` -> `test/fixtures/reference-refresh.json`):
 * with the saliency scores a model would give at each update fixed by the fixture, the
 * advantages every update of `Trainer.step` trains on are the reference's A * w(scores of that
 * moment), for each refresh mode and each GRAIL option that changes the weights (symmetry, the
 * override leak). The scores come from a scripted backend (the arithmetic is what is checked);
 * the trainer, its mini-batch schedule, `SignalRefresh`, `refreshSignals` and the estimator are real.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { prepareEstimator } from '@rlvr/advantages';
import { SIGNAL_NAMES, Signals, batchFromRows, totalTokens } from '@rlvr/core';
import type { AnswerSpans, RolloutBatch } from '@rlvr/core';
import { Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import type { SaliencyBackend, SignalPlan } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import type { AdvantageRefresh } from '@rlvr/trainer';
import { SignalRefresh, SignalRefreshOptionsSchema } from './refresh.js';

interface Fixture {
  epochs: number;
  miniBatches: number;
  rows: { group: number; reward: number; length: number; spans: AnswerSpans | null }[];
  /** [update][rollout][token] */
  scores: number[][][];
  options: Record<string, Record<string, unknown>>;
  /** [option set][update] A * w over every completion token of the batch */
  advantages: Record<string, number[][]>;
}
const F = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../test/fixtures/reference-refresh.json', import.meta.url)), 'utf8'),
) as Fixture;
const M = F.miniBatches;
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

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

function batch(): RolloutBatch {
  return batchFromRows(
    F.rows.map((r, i) => ({
      group: r.group,
      reward: r.reward,
      prompt: [3, 7 + i],
      completion: Array.from({ length: r.length }, (_, t) => 1 + ((i * 7 + t * 5) % 39)),
      spans: r.spans,
    })),
  );
}

/** Scores of update `now.k` for the rollouts `now.rows` (the sub-batch a refresh recomputes), from the fixture. */
function scriptedBackend(now: { k: number; rows: readonly number[] }): SaliencyBackend {
  return {
    name: 'scripted',
    signal: SIGNAL_NAMES.gradXEmb,
    needsModel: false,
    configSchema: SignalRefreshOptionsSchema,
    parseConfig: (c) => c,
    compute: async (_model, sub) => {
      const scores = Float32Array.from(now.rows.flatMap((i) => F.scores[now.k]![i]!));
      expect(scores.length).toBe(totalTokens(sub));
      return { signal: SIGNAL_NAMES.gradXEmb, scores, hasScores: new Uint8Array(sub.numRollouts).fill(1), missing: 0 };
    },
  };
}

/** Tokens of `rows` of a [totalTokens] array, flattened in row order. */
const pick = (b: RolloutBatch, a: ArrayLike<number>, rows: readonly number[]) =>
  rows.flatMap((i) =>
    Array.from({ length: b.completionOffsets[i + 1]! - b.completionOffsets[i]! }, (_, t) => a[b.completionOffsets[i]! + t]!),
  );

describe('saliency.refresh reproduces the GRAIL reference weight refresh (NumPy fixture)', () => {
  const cases = Object.keys(F.options).flatMap((name) => (['minibatch', 'epoch'] as const).map((every) => [name, every] as const));
  test.each(cases)('%s, refresh %s: every update trains on A * w(the scores of its moment)', async (name, every) => {
    const b = batch();
    const all = [...Array(b.numRollouts).keys()];
    const estimatorConfig = F.options[name]!;
    const estimator = prepareEstimator('grail', estimatorConfig);
    const now = { k: 0, rows: all as readonly number[] };
    const backend = scriptedBackend(now);
    const plan: SignalPlan = {
      needs: estimator.needs,
      sources: [{ backend, signal: backend.signal, config: {} }],
      logprobsFrom: null,
      temperature: 1,
      options: {},
      refresh: every,
      box: 'first',
    };
    // the behaviour pass: table 0, what `batch` trains on at every update
    const base = new Signals(totalTokens(b)).set(SIGNAL_NAMES.gradXEmb, Float32Array.from(F.scores[0]!.flat()));
    const given = estimator.estimate(b, base).advantages;
    expect(
      Array.from(given)
        .map((x, t) => x - F.advantages[name]![0]![t]!)
        .every((d) => Math.abs(d) < 1e-6),
    ).toBe(true);

    const inner = new SignalRefresh(SignalRefreshOptionsSchema.parse({ every, estimator: 'grail', estimatorConfig }), estimator, plan);
    inner.useSignals(b, base);
    const calls: { k: number; rows: number[]; adv: Float32Array }[] = [];
    const recording: AdvantageRefresh = {
      every: inner.every,
      spec: inner.spec,
      async advantages(model, bb, rows, ctx) {
        now.k = ctx!.pass * M + ctx!.miniBatch;
        now.rows = rows;
        const adv = await inner.advantages(model, bb, rows, ctx);
        calls.push({ k: now.k, rows: [...rows], adv });
        return adv;
      },
    };
    const model = Qwen3Model.random(tiny, 3, 0.3);
    try {
      await new Trainer(model, { epochs: F.epochs, miniBatches: M, schedule: { lr: 1e-2 }, seed: 4 }).step(b, given, {
        refresh: recording,
      });
    } finally {
      model.dispose();
    }
    // when: minibatch before every update but the first; epoch before every pass but the first
    const expectedK =
      every === 'minibatch' ? [...Array(F.epochs * M).keys()].slice(1) : [...Array(F.epochs).keys()].slice(1).map((p) => p * M);
    expect(calls.map((c) => c.k)).toEqual(expectedK);
    for (const c of calls) {
      // minibatch: that mini-batch's rollouts; epoch: all of them
      expect(every === 'epoch' ? c.rows : c.rows.length).toEqual(every === 'epoch' ? all : b.numRollouts / M);
      const ours = pick(b, c.adv, c.rows);
      const reference = pick(b, F.advantages[name]![c.k]!, c.rows);
      for (const [t, x] of ours.entries())
        expect(Math.abs(x - reference[t]!), `update ${c.k}, token ${t}`).toBeLessThan(1e-6 * Math.max(1, Math.abs(reference[t]!)));
    }
    // every pass covers every rollout once
    if (every === 'minibatch')
      for (let p = 1; p < F.epochs; p++)
        expect(
          calls
            .filter((c) => Math.floor(c.k / M) === p)
            .flatMap((c) => c.rows)
            .sort(),
        ).toEqual(all);
  });

  test('the option sets differ where the reference says they do', () => {
    const A = F.advantages;
    const differ = (a: string, b: string) => A[a]![1]!.some((x, t) => Math.abs(x - A[b]![1]![t]!) > 1e-3);
    expect(differ('reference', 'symmetry-both')).toBe(true);
    expect(differ('reference', 'symmetry-correct')).toBe(true);
    expect(differ('reference', 'no-leak')).toBe(true);
    // and the tables of two updates differ: a stale table would be caught
    expect(A.reference![1]!.some((x, t) => Math.abs(x - A.reference![0]![t]!) > 1e-3)).toBe(true);
  });
});
