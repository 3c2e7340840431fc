import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { Signals, batchFromRows } from '@rlvr/core';
import { PROCESS_STEPS, stepSignal, verigateEstimator } from './index.js';

registerEstimator(verigateEstimator);

interface Case {
  name: string;
  config: { stepEps: number; stepOrder: 'cumulate-normalize' | 'normalize-sum'; bessel: boolean; degenerateTol: number };
  group: number[];
  reward: number[];
  ends: number[][];
  scores: number[][];
  lengths: number[];
  advantages: number[];
}
/** Written by tools/fixtures/verigate/numpy_reference.py (float64 NumPy, from the definition): both orders, both std conventions, 0/1 and continuous rewards. */
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/numpy-reference.json', import.meta.url), 'utf8')) as { cases: Case[] };

describe.each(fixture.cases.map((c) => [c.name, c] as const))('NumPy reference: %s', (_name, c) => {
  it('advantages within 1e-6', () => {
    const batch = batchFromRows(
      c.group.map((g, i) => ({ group: g, reward: c.reward[i]!, prompt: [1], completion: Array.from({ length: c.lengths[i]! }, () => 3) })),
    );
    const steps = c.ends.map((e, i) =>
      e.map((end, k) => ({ bytes: [0, 0] as const, tokens: [k === 0 ? 0 : e[k - 1]!, end] as const, score: c.scores[i]![k]! })),
    );
    const { values, width } = stepSignal(steps);
    const signals = Signals.forBatch(batch).setPerRollout(PROCESS_STEPS, values, width);
    const r = prepareEstimator('verigate', c.config).estimate(batch, signals);
    expect(r.advantages.length).toBe(c.advantages.length);
    let worst = 0;
    c.advantages.forEach((e, t) => (worst = Math.max(worst, Math.abs(r.advantages[t]! - e) / Math.max(1, Math.abs(e)))));
    expect(worst).toBeLessThan(1e-6);
  });
});
