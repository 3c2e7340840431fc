import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { SIGNAL_NAMES } from '@rlvr/core';
import { interopBatch, type InteropRow } from './interop.js';
import { prepareEstimator } from './prepare.js';
import { baselines, estimators, weightings } from './registry.js';
import { batchArb } from './test-utils/batches.js';

/**
 * Bit-identical advantages across refactors: every registered estimator (and every
 * BASELINE+WEIGHTING) on fixed batches, compared bit for bit with a fixture written by the
 * code of an earlier commit (`RLVR_WRITE_GOLDEN=1 npx vitest run src/golden.test.ts` rewrites it).
 * Float arrays are stored as hex of their bytes, metrics as JSON numbers (exact; NaN as null).
 */
interface Golden {
  cases: {
    rows: InteropRow[];
    runs: Record<string, { advantages: string; weights: string; sequence: string; metrics: Record<string, number | null> }>;
  }[];
}
const FILE = new URL('../test/fixtures/golden-advantages.json', import.meta.url);

/** Option variants beyond the defaults, by estimator name. */
const VARIANTS: Record<string, Record<string, unknown>[]> = {
  grpo: [{ scaleRewards: 'batch' }, { bessel: false, stdEps: 0 }],
  'reinforce-pp-baseline': [{ degenerateGroups: 'whiten' }],
  grail: [{ symmetry: 'both' }, { symmetry: 'correct', overrideExcluded: false }, { sigmaW: 1, wMin: 0.1 }],
  'oar-g': [{ tau: 0.7, beta: 1, floor: 0.2 }],
};

function names(): string[] {
  const combos = baselines.names().flatMap((b) => weightings.names().map((w) => `${b}+${w}`));
  return [...estimators.names(), ...combos];
}

function hex(a: Float32Array | Float64Array): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');
}

function compute(rows: InteropRow[]) {
  const { batch, signals } = interopBatch(rows, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.noisyKl]);
  const runs: Golden['cases'][number]['runs'] = {};
  for (const name of names()) {
    for (const config of [{}, ...(VARIANTS[name] ?? [])]) {
      const r = prepareEstimator(name, config).estimate(batch, signals);
      const metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, Number.isNaN(v) ? null : v]));
      runs[`${name} ${JSON.stringify(config)}`] = {
        advantages: hex(r.advantages),
        weights: hex(r.weights),
        sequence: hex(r.sequenceAdvantages),
        metrics,
      };
    }
  }
  return runs;
}

if (process.env.RLVR_WRITE_GOLDEN === '1') {
  const batches = fc.sample(batchArb, { seed: 29, numRuns: 12 });
  const cases = batches.map((rollouts) => {
    const rows: InteropRow[] = rollouts.map((r) => ({
      group: r.group,
      reward: r.reward,
      length: r.length,
      spans: r.spans ?? null,
      saliency: r.scores ?? new Array<number>(r.length).fill(1),
    }));
    // through JSON first, as the test reads them (a reward of -0 reads back as 0)
    const read = JSON.parse(JSON.stringify(rows)) as InteropRow[];
    return { rows: read, runs: compute(read) };
  });
  writeFileSync(FILE, `${JSON.stringify({ cases } satisfies Golden)}\n`);
}

const golden = JSON.parse(readFileSync(FILE, 'utf8')) as Golden;

describe('advantages are bit-identical to the committed fixture', () => {
  it.each(golden.cases.map((c, k) => [k, c] as const))('batch %i', (_k, c) => {
    const runs = compute(c.rows);
    expect(Object.keys(runs).sort()).toEqual(Object.keys(c.runs).sort());
    for (const [key, want] of Object.entries(c.runs)) expect(runs[key], key).toEqual(want);
  });
});
