import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SIGNAL_NAMES } from '@rlvr/core';
import { interopBatch, type InteropRow } from './interop.js';
import { prepareEstimator } from './prepare.js';
import { baselines } from './registry.js';

/**
 * Checks against numbers we did not compute with this code: the fixture is
 * written by tools/fixtures/advantages/numpy_reference.py (float64 NumPy).
 */
interface Case {
  name: string;
  rows: InteropRow[];
  expected: Record<string, (number | null)[]>;
}
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/numpy-reference.json', import.meta.url), 'utf8')) as { cases: Case[] };

/** Relative error under `tol`; a null expectation (undefined in NumPy) must be NaN here. */
function close(actual: ArrayLike<number>, expected: (number | null)[], tol: number) {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let k = 0; k < expected.length; k++) {
    const e = expected[k]!;
    if (e === null) expect(actual[k]).toBeNaN();
    else worst = Math.max(worst, Math.abs(actual[k]! - e) / Math.max(1, Math.abs(e)));
  }
  expect(worst).toBeLessThan(tol);
}

describe.each(fixture.cases.map((c) => [c.name, c] as const))('NumPy reference: %s', (_name, c) => {
  const { batch, signals } = interopBatch(c.rows, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.noisyKl]);
  const seq = (name: string, config: Record<string, unknown> = {}) => {
    const out = new Float64Array(batch.numRollouts);
    const b = baselines.get(name);
    b.compute(batch, b.configSchema.parse(config), out);
    return out;
  };
  it('sequence baselines', () => {
    for (const name of ['grpo', 'dr-grpo', 'rloo', 'reinforce-pp-baseline']) close(seq(name), c.expected[name]!, 1e-9);
    close(seq('grpo', { bessel: false, stdEps: 1e-4 }), c.expected['grpo_population_eps1e-4']!, 1e-9);
  });
  it('the other frameworks’ variants: TRL’s batch std, verl’s whitening of degenerate groups', () => {
    close(seq('grpo', { scaleRewards: 'batch' }), c.expected.grpo_batch_std!, 1e-9);
    close(seq('reinforce-pp-baseline', { degenerateGroups: 'whiten' }), c.expected['reinforce-pp-baseline_verl']!, 1e-9);
  });
  it('GRAIL clip fractions and the advantage scale ratios (the reference’s and ours)', () => {
    const m = (config: Record<string, unknown>) => prepareEstimator('grail', config).estimate(batch, signals).metrics;
    const d = m({});
    close([d.clip_frac_min!, d.clip_frac_max!], c.expected.grail_clip_frac!, 1e-12);
    const custom = m({ sigmaW: 1.5, wMean: 1.2, wMin: 0.1, wMax: 3, eps: 1e-6, symmetry: 'both' });
    close([custom.clip_frac_min!, custom.clip_frac_max!], c.expected.grail_clip_frac_custom!, 1e-12);
    close([d.advantages_scale_ratio!, d.advantage_scale_ratio_tokens!], c.expected.grail_scale_ratios!, 1e-6);
  });
  it('GRAIL weights, every symmetry and override option', () => {
    const w = (config: Record<string, unknown>) => prepareEstimator('grail', config).estimate(batch, signals).weights;
    close(w({}), c.expected.grail_weights!, 1e-6);
    close(w({ symmetry: 'both' }), c.expected.grail_weights_both!, 1e-6);
    close(w({ symmetry: 'correct' }), c.expected.grail_weights_correct!, 1e-6);
    close(w({ overrideExcluded: false }), c.expected.grail_weights_wrong_paper!, 1e-6);
    close(w({ sigmaW: 1.5, wMean: 1.2, wMin: 0.1, wMax: 3, eps: 1e-6, symmetry: 'both' }), c.expected.grail_weights_custom!, 1e-6);
  });
  it('OAR-G weights', () => {
    const w = (config: Record<string, unknown>) => prepareEstimator('oar-g', config).estimate(batch, signals).weights;
    close(w({}), c.expected.oar_g_weights!, 1e-6);
    close(w({ tau: 0.25, beta: 1, floor: 0.3 }), c.expected.oar_g_weights_custom!, 1e-6);
  });
  it('GRAIL advantages = Dr. GRPO advantage x weight', () => {
    const r = prepareEstimator('grail').estimate(batch, signals);
    const dr = c.expected['dr-grpo']!;
    const w = c.expected.grail_weights!;
    const expected: number[] = [];
    c.rows.forEach((row, i) => {
      for (let t = 0; t < row.length; t++) expected.push(dr[i]! * w[expected.length]!);
    });
    close(r.advantages, expected, 1e-6);
  });
});
