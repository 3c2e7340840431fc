import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { Signals, batchFromRows, type RolloutBatch } from '@rlvr/core';
import { PROCESS_STEPS, arithmeticChecker, stepSignal, verigateEstimator, type ProcessStep } from './index.js';

registerEstimator(verigateEstimator);

const enc = (s: string) => new TextEncoder().encode(s);

describe('arithmetic checker', () => {
  it('scores every stated equation, with byte-exact token spans (a cut inside a token moves to its end)', () => {
    const pieces = ['12 + 7', ' = 19\n1', '9 - 5 = 13', '\n\\boxed{13}'];
    const steps = arithmeticChecker.score([{ tokenBytes: pieces.map(enc) }])[0]!;
    expect(steps).toEqual([
      { bytes: [0, 13], tokens: [0, 2], score: 1 },
      { bytes: [13, 23], tokens: [2, 3], score: 0 },
    ]);
    const text = pieces.join('');
    expect(text.slice(0, 13)).toBe('12 + 7 = 19\n1'); // the second equation starts inside token 1
  });

  it("reads the long-chain task's numbers, written one digit at a time", () => {
    // 47 * 2 = 94 (right), 94 - 29 = 65 (right), 65 + 20 = 84 (wrong: 85); a plain number beside stays whole
    const text = '4 7 * 2 = 9 4\n9 4 - 2 9 = 6 5\n6 5 + 2 0 = 8 4\n12 / 4 = 3\n\\boxed{84}';
    const steps = arithmeticChecker.score([{ tokenBytes: [...text].map(enc) }])[0]!;
    expect(steps.map((s) => s.score)).toEqual([1, 1, 0, 1]);
    expect(steps.map((s) => text.slice(s.bytes[0], s.bytes[1]).trim())).toEqual([
      '4 7 * 2 = 9 4',
      '9 4 - 2 9 = 6 5',
      '6 5 + 2 0 = 8 4',
      '12 / 4 = 3',
    ]);
  });
});

function batchOf(group: number[], reward: number[], lengths: number[]): RolloutBatch {
  return batchFromRows(
    group.map((g, i) => ({ group: g, reward: reward[i]!, prompt: [1], completion: Array.from({ length: lengths[i]! }, () => 3) })),
  );
}

const rollouts = fc.array(
  fc.record({
    group: fc.integer({ min: 0, max: 3 }),
    reward: fc.constantFrom(0, 1),
    steps: fc.array(fc.constantFrom(0, 1), { maxLength: 4 }),
    tail: fc.integer({ min: 0, max: 3 }),
  }),
  { minLength: 1, maxLength: 12 },
);

function run(rs: { group: number; reward: number; steps: number[]; tail: number }[], config: Record<string, unknown> = {}) {
  const steps: ProcessStep[][] = rs.map((r) => r.steps.map((s, k) => ({ bytes: [k, k + 1], tokens: [2 * k, 2 * k + 2], score: s })));
  const batch = batchOf(
    rs.map((r) => r.group),
    rs.map((r) => r.reward),
    rs.map((r) => 2 * r.steps.length + r.tail),
  );
  const { values, width } = stepSignal(steps);
  const signals = Signals.forBatch(batch).setPerRollout(PROCESS_STEPS, values, width);
  return {
    batch,
    steps,
    v: prepareEstimator('verigate', config).estimate(batch, signals),
    g: prepareEstimator('grpo').estimate(batch, signals),
  };
}

describe('invariants (fast-check)', () => {
  it('groups whose rewards differ get GRPO exactly; degenerate groups: step values have mean 0, tails 0', () => {
    fc.assert(
      fc.property(rollouts, (rs) => {
        const { batch, v, g } = run(rs);
        const o = batch.completionOffsets;
        for (const grp of new Set(rs.map((r) => r.group))) {
          const rows = rs.flatMap((r, i) => (r.group === grp ? [i] : []));
          const degenerate = rows.every((i) => rs[i]!.reward === rs[rows[0]!]!.reward);
          if (!degenerate) {
            for (const i of rows) expect(v.advantages.subarray(o[i]!, o[i + 1]!)).toEqual(g.advantages.subarray(o[i]!, o[i + 1]!));
            continue;
          }
          let sum = 0;
          let n = 0;
          for (const i of rows) {
            const k = rs[i]!.steps.length;
            for (let s = 0; s < k; s++) {
              expect(v.advantages[o[i]! + 2 * s]).toBe(v.advantages[o[i]! + 2 * s + 1]); // one value per step
              sum += v.advantages[o[i]! + 2 * s]!;
              n++;
            }
            for (let t = o[i]! + 2 * k; t < o[i + 1]!; t++) expect(v.advantages[t]).toBe(0);
          }
          if (n > 0) expect(Math.abs(sum / n)).toBeLessThan(1e-5);
        }
      }),
    );
  });
});

describe('normalize-sum (fast-check)', () => {
  it("groups whose rewards differ get GRPO exactly; in degenerate groups a step's value minus the next step's is its own normalised score, and the first steps' values sum to 0", () => {
    fc.assert(
      fc.property(rollouts, (rs) => {
        const { batch, v, g } = run(rs, { stepOrder: 'normalize-sum' });
        const o = batch.completionOffsets;
        for (const grp of new Set(rs.map((r) => r.group))) {
          const rows = rs.flatMap((r, i) => (r.group === grp ? [i] : []));
          if (!rows.every((i) => rs[i]!.reward === rs[rows[0]!]!.reward)) {
            for (const i of rows) expect(v.advantages.subarray(o[i]!, o[i + 1]!)).toEqual(g.advantages.subarray(o[i]!, o[i + 1]!));
            continue;
          }
          // the group's step scores, normalised here (Bessel's std, eps 1e-6)
          const all: number[] = rows.flatMap((i) => rs[i]!.steps);
          if (all.length < 2) continue;
          const mean = all.reduce((a, b) => a + b, 0) / all.length;
          const std = Math.sqrt(all.reduce((a, b) => a + (b - mean) ** 2, 0) / (all.length - 1));
          let firsts = 0;
          for (const i of rows) {
            const k = rs[i]!.steps.length;
            for (let s = 0; s < k; s++) {
              const here = v.advantages[o[i]! + 2 * s]!;
              const next = s + 1 < k ? v.advantages[o[i]! + 2 * s + 2]! : 0;
              expect(here - next).toBeCloseTo((rs[i]!.steps[s]! - mean) / (std + 1e-6), 4);
            }
            if (k > 0) firsts += v.advantages[o[i]!]!;
          }
          expect(Math.abs(firsts)).toBeLessThan(1e-4);
        }
      }),
    );
  });
});

describe('by hand', () => {
  it('continuation rewards, normalised over the group', () => {
    // one all-wrong group: rollout 0 steps (1, 0) -> R = (1, 0); rollout 1 step (1) -> R = (1)
    const { v } = run([
      { group: 0, reward: 0, steps: [1, 0], tail: 1 },
      { group: 0, reward: 0, steps: [1], tail: 0 },
    ]);
    const mean = 2 / 3;
    const std = Math.sqrt(((1 - mean) ** 2 * 2 + mean ** 2) / 2); // Bessel's, as GRPO's default
    const hi = Math.fround((1 - mean) / (std + 1e-6));
    const lo = Math.fround(-mean / (std + 1e-6));
    expect([...v.advantages]).toEqual([hi, hi, lo, lo, 0, hi, hi]);
    expect(v.metrics.verigate_degenerate_groups).toBe(1);
  });
  it('normalize-sum: step scores normalised over the group, then summed over the future steps; one std convention (bessel) for both branches', () => {
    const rs = [
      { group: 0, reward: 0, steps: [1, 0], tail: 1 },
      { group: 0, reward: 0, steps: [1], tail: 0 },
    ];
    const { batch, steps } = run(rs);
    const { values, width } = stepSignal(steps);
    const signals = Signals.forBatch(batch).setPerRollout(PROCESS_STEPS, values, width);
    for (const bessel of [true, false]) {
      const v = prepareEstimator('verigate', { stepOrder: 'normalize-sum', bessel }).estimate(batch, signals);
      // scores (1, 0, 1): mean 2/3
      const mean = 2 / 3;
      const std = Math.sqrt(((1 - mean) ** 2 * 2 + mean ** 2) / (bessel ? 2 : 3));
      const z1 = (1 - mean) / (std + 1e-6);
      const z0 = -mean / (std + 1e-6);
      expect([...v.advantages]).toEqual([z1 + z0, z1 + z0, z0, z0, 0, z1, z1].map(Math.fround));
    }
  });
  it('degenerateTol: rewards within it count as equal (continuous rewards); beyond it GRPO decides', () => {
    const batch = batchOf([0, 0], [0.01, 0.03], [2, 2]);
    const steps: ProcessStep[][] = [[{ bytes: [0, 1], tokens: [0, 2], score: 1 }], [{ bytes: [0, 1], tokens: [0, 2], score: 0 }]];
    const { values, width } = stepSignal(steps);
    const signals = Signals.forBatch(batch).setPerRollout(PROCESS_STEPS, values, width);
    const exact = prepareEstimator('verigate').estimate(batch, signals);
    expect(exact.advantages).toEqual(prepareEstimator('grpo').estimate(batch, signals).advantages);
    expect(exact.metrics.verigate_degenerate_groups).toBe(0);
    const tol = prepareEstimator('verigate', { degenerateTol: 0.05 }).estimate(batch, signals);
    expect(tol.metrics.verigate_degenerate_groups).toBe(1);
    const z = Math.fround(0.5 / (Math.SQRT1_2 + 1e-6)); // scores (1, 0), Bessel std sqrt(1/2)
    expect([...tol.advantages]).toEqual([z, z, -z, -z]);
    expect(() => prepareEstimator('verigate', { degenerateTol: -1 })).toThrow('degenerateTol');
    expect(() => prepareEstimator('verigate', { stepOrder: 'sum' })).toThrow('stepOrder');
  });
  it('a step outside the completion names the rollout', () => {
    const batch = batchOf([0], [1], [2]);
    const signals = Signals.forBatch(batch).setPerRollout(PROCESS_STEPS, Float32Array.from([5, 1]), 2);
    expect(() => prepareEstimator('verigate').estimate(batch, signals)).toThrow(
      'rollout 0, field process.steps: process.steps: step 0 ends at token 5',
    );
  });
});
