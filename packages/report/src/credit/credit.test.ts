import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '@rlvr/core';
import { describe, expect, test } from 'vitest';
import { syntheticCredit } from '../test-utils/synthetic-credit.js';
import { drawResamples, estimate } from './bootstrap.js';
import { creditMap } from './credit-map.js';
import type { CreditInput } from './input.js';
import { readCreditJson, writeCreditJson } from './json.js';
import { creditMetrics } from './metrics.js';
import { auroc } from './per-rollout.js';
import { pairsForPower } from '../tests.js';

const offsets = Int32Array.from([0, 3, 5, 8]);
const correct = [true, true, false];

describe('creditMap', () => {
  test('the weight where the method has one, else the advantage over the sequence advantage', () => {
    const advantages = Float32Array.from([1, 2, 3, -0.5, -1, 0, 0, 0]);
    const weights = Float32Array.from([1, 2, 3, 1, 2, 0.5, 1, 1.5]);
    const w = creditMap('w', { advantages, sequenceAdvantages: [1, -0.5, 0], weights, offsets, correct });
    expect(Array.from(w.credit)).toEqual(Array.from(weights));
    expect(Array.from(w.degenerate)).toEqual([0, 0, 0]);
    expect(Array.from(w.absAdvantage)).toEqual([1, 2, 3, 0.5, 1, 0, 0, 0]);
    const r = creditMap('r', { advantages, sequenceAdvantages: [0.5, -0.5, 0], offsets, correct });
    expect(Array.from(r.credit.subarray(0, 5))).toEqual([2, 4, 6, 1, 2]);
  });

  test('sequence advantage 0: the advantage over its mean magnitude in the rollout, flagged degenerate; all-zero stays 0', () => {
    const advantages = Float32Array.from([1, 1, 1, 0, 0, -1, 3, 0]);
    const m = creditMap('v', { advantages, sequenceAdvantages: [1, 0, 0], offsets, correct });
    expect(Array.from(m.degenerate)).toEqual([0, 1, 1]);
    expect(Array.from(m.credit.subarray(3, 5))).toEqual([0, 0]);
    // mean |a| of the last rollout is 4/3: credit mean magnitude 1; it is wrong, so blame (a < 0) is positive credit
    expect(Array.from(m.credit.subarray(5))).toEqual([0.75, -2.25, 0]);
    const c = creditMap('v', { advantages, sequenceAdvantages: [1, 0, 0], offsets, correct: [true, true, true] });
    expect(Array.from(c.credit.subarray(5))).toEqual([-0.75, 2.25, 0]);
  });

  test('lengths that do not fit are refused, naming the method and the array', () => {
    expect(() => creditMap('grail', { advantages: new Float32Array(7), sequenceAdvantages: [1, 1, 1], offsets, correct })).toThrow(
      'method grail: advantages has 7 entries but the offsets cover 8 tokens',
    );
    expect(() => creditMap('grail', { advantages: new Float32Array(8), sequenceAdvantages: [1], offsets, correct })).toThrow(
      /sequenceAdvantages has 1 entries but there are 3 rollouts/,
    );
    expect(() => creditMap('grail', { advantages: new Float32Array(8), sequenceAdvantages: [1, 1, 1], offsets, correct: [true] })).toThrow(
      'method grail: correct has 1 entries but there are 3 rollouts',
    );
  });
});

describe('auroc', () => {
  test('equals the brute-force share of pairs, ties 1/2, on values with many ties', () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 200; trial++) {
      const draw = (n: number) => Float32Array.from({ length: n }, () => Math.round(rng.normal() * 2) / 2);
      const pos = draw(1 + rng.int(12));
      const neg = draw(1 + rng.int(30));
      let u = 0;
      for (const p of pos) for (const q of neg) u += p > q ? 1 : p === q ? 0.5 : 0;
      expect(auroc(pos.slice(), neg.slice())).toBe(u / (pos.length * neg.length));
    }
    expect(auroc(Float32Array.of(2), Float32Array.of(1, 1))).toBe(1);
    expect(auroc(Float32Array.of(0), Float32Array.of(1, 1))).toBe(0);
  });
});

describe('creditMetrics', () => {
  const input = syntheticCredit(300);
  const report = creditMetrics(input, { resamples: 400 });
  const byName = (name: string) => report.methods.find((m) => m.name === name)!;

  test('uniform weighting scores exactly 0.5 and exactly the token share, rollout by rollout', () => {
    const v = report.values.uniform!;
    let scored = 0;
    report.rollouts.status.forEach((s, i) => {
      if (s !== 'scored') return expect(v.auroc[i]).toBeNull();
      scored++;
      expect(v.auroc[i]).toBe(0.5);
      if (v.massShare[i] !== null) expect(v.massShare[i]).toBe(v.tokenShare[i]);
    });
    expect(scored).toBeGreaterThan(100);
    const u = byName('uniform').wrong;
    expect(u.auroc).toMatchObject({ mean: 0.5, sd: 0, ci: [0.5, 0.5] });
    expect(u.excess).toMatchObject({ mean: 0, ci: [0, 0] });
    expect(u.massShare.mean).toBe(u.tokenShare.mean);
    // rollouts of all-equal groups have no |advantage| under GRPO's baseline: counted, not scored for mass
    expect(u.zeroMass).toBeGreaterThan(0);
    expect(u.massShare.n + u.zeroMass).toBe(u.auroc.n);
  });

  test('every rollout is counted by status; unlabelled and first-line errors are counted, not scored', () => {
    const s = report.counts.status;
    expect(Object.values(s).reduce((a, b) => a + b, 0)).toBe(300);
    expect(s.unlabelled).toBeGreaterThan(0);
    expect(s.no_prefix).toBeGreaterThan(0);
    expect(s.correct).toBe(report.counts.correct);
    expect(byName('blame').wrong.auroc.n).toBe(s.scored);
  });

  test("a wrong first line after a preamble (the labeller's correctSteps 0) has no correct prefix", () => {
    const i = input.rollouts.findIndex((r) => typeof r.label === 'object' && r.label.tokenStart > 0);
    const label = { ...(input.rollouts[i]!.label as object), kind: 'copy', tokenStart: 3, tokenEnd: 5 };
    const with0 = input.rollouts.map((r, k) => (k === i ? { ...r, label: { ...label, correctSteps: 0 } } : r));
    const with2 = input.rollouts.map((r, k) => (k === i ? { ...r, label: { ...label, correctSteps: 2 } } : r));
    expect(creditMetrics({ ...input, rollouts: with0 }, { resamples: 100 }).rollouts.status[i]).toBe('no_prefix');
    expect(creditMetrics({ ...input, rollouts: with2 }, { resamples: 100 }).rollouts.status[i]).toBe('scored');
  });

  test('a method that blames the error line scores above 0.5, and the paired difference to uniform is detected', () => {
    const blame = byName('blame').wrong;
    expect(blame.auroc.ci![0]).toBeGreaterThan(0.6);
    expect(blame.on.mean!).toBeGreaterThan(blame.before.mean! + 0.5);
    const pair = report.pairs.find((p) => p.a === 'uniform' && p.b === 'blame' && p.metric === 'auroc')!;
    expect(pair.difference.ci![1]).toBeLessThan(0);
    expect(pair.test.pT!).toBeLessThan(1e-10);
    expect(pair.test.pWilcoxon!).toBeLessThan(1e-10);
    // a difference this clear needs few rollouts for 80% power; uniform's U contrast (0 in every rollout) has none to detect
    expect(pair.test.n80).toBe(pairsForPower(pair.difference.mean!, pair.difference.sd!));
    expect(pair.test.n80!).toBeLessThan(pair.difference.n);
    expect(byName('uniform').uShape.test.n80).toBeNull();
  });

  test('degenerate rollouts are scored apart and left out of the pairs', () => {
    const gate = byName('gate');
    expect(gate.degenerate.rollouts).toBeGreaterThan(0);
    expect(gate.degenerateWrong.auroc.n).toBe(gate.degenerate.scored);
    expect(gate.wrong.auroc.n + gate.degenerate.scored).toBe(report.counts.status.scored);
    const pair = report.pairs.find((p) => p.a === 'uniform' && p.b === 'gate' && p.metric === 'auroc')!;
    expect(pair.difference.n).toBe(gate.wrong.auroc.n);
  });

  test('deterministic under the seed; another seed moves only the intervals', () => {
    const again = creditMetrics(input, { resamples: 400 });
    expect(again).toEqual(report);
    const other = creditMetrics(input, { resamples: 400, seed: 1 });
    expect(other.methods[1]!.wrong.auroc.mean).toBe(report.methods[1]!.wrong.auroc.mean);
    expect(other.methods[1]!.wrong.auroc.ci).not.toEqual(report.methods[1]!.wrong.auroc.ci);
  });

  test('the correct profile has a bin per position, and the mid-chain difference is wrong minus correct', () => {
    const blame = byName('blame');
    expect(blame.correctProfile).toHaveLength(20);
    expect(blame.errorProfile.map((b) => b.segment)).toEqual([...Array(5).fill('before'), 'on', ...Array(5).fill('after')]);
    const { wrong, correct, difference } = blame.midChain;
    expect(difference.diff).toBeCloseTo(wrong.mean! - correct.mean!, 12);
    expect(difference.ci![0]).toBeLessThan(difference.diff!);
    expect(difference.ci![1]).toBeGreaterThan(difference.diff!);
    // the synthetic weights carry a cosine over the completion: high at both ends, a U
    expect(blame.uShape.contrast.ci![0]).toBeGreaterThan(0);
  });
});

describe('the bootstrap', () => {
  test('its 95% interval of a mean is about ±1.96 SD / sqrt(n) (normal data, n = 2000)', () => {
    const rng = new Rng(11);
    const x = Float64Array.from({ length: 2000 }, () => 3 + 2 * rng.normal());
    const e = estimate(x, drawResamples(2000, 2000, 5));
    const half = (1.959964 * e.sd!) / Math.sqrt(2000);
    expect(e.ci![0]).toBeGreaterThan(e.mean! - 1.15 * half);
    expect(e.ci![0]).toBeLessThan(e.mean! - 0.85 * half);
    expect(e.ci![1]).toBeGreaterThan(e.mean! + 0.85 * half);
    expect(e.ci![1]).toBeLessThan(e.mean! + 1.15 * half);
  });

  test('undefined values (NaN) are left out of the mean and of every resample', () => {
    const x = Float64Array.from([1, Number.NaN, 3, Number.NaN]);
    expect(estimate(x, drawResamples(4, 200, 0))).toMatchObject({ n: 2, mean: 2, sd: Math.SQRT2 });
    expect(estimate(new Float64Array([Number.NaN]), drawResamples(1, 100, 0))).toEqual({ n: 0, mean: null, sd: null, ci: null });
  });
});

describe('bad input', () => {
  const base = (): CreditInput => syntheticCredit(16);

  test('an error line outside its completion names the rollout', () => {
    const input = base();
    const i = input.rollouts.findIndex((r) => !r.correct);
    const rollouts = input.rollouts.map((r, k) => (k === i ? { ...r, label: { kind: 'copy', tokenStart: 2, tokenEnd: 999 } } : r));
    expect(() => creditMetrics({ ...input, rollouts })).toThrow(
      `rollout ${i}: its error line [2, 999) is not within its ${input.rollouts[i]!.tokens} tokens`,
    );
  });

  test('arrays that do not fit the rollouts, a method given twice, a non-finite credit, bad options', () => {
    const input = base();
    const m = input.methods[0]!;
    expect(() => creditMetrics({ ...input, methods: [{ ...m, credit: m.credit.subarray(1) }] })).toThrow(
      /method uniform: credit has \d+ entries but the rollouts need \d+/,
    );
    expect(() => creditMetrics({ ...input, methods: [m, m] })).toThrow('method uniform is given twice');
    const credit = m.credit.slice();
    credit[input.rollouts[0]!.tokens + 2] = Number.NaN;
    expect(() => creditMetrics({ ...input, methods: [{ ...m, credit }] })).toThrow(
      'method uniform: rollout 1, token 2: credit or |advantage| is not finite',
    );
    expect(() => creditMetrics(input, { resamples: 5 })).toThrow(/invalid credit options: resamples/);
    expect(() => creditMetrics({ ...input, methods: [] })).toThrow('no method to score');
  });
});

describe('the JSON file', () => {
  test('written whole, read back through its schema; nothing left behind when the directory is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-json-'));
    const report = creditMetrics(syntheticCredit(40), { resamples: 100 });
    const path = join(dir, 'credit.json');
    await writeCreditJson(path, report);
    expect(await readCreditJson(path)).toEqual(report);
    expect(readFileSync(path, 'utf8')).not.toContain('NaN');
    await expect(writeCreditJson(join(dir, 'missing', 'credit.json'), report)).rejects.toThrow(/does not exist/);
    expect(readdirSync(dir)).toEqual(['credit.json']);
  });

  test('a file that is not a credit report names the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-json-'));
    const report = creditMetrics(syntheticCredit(20), { resamples: 100 });
    const path = join(dir, 'bad.json');
    await writeCreditJson(path, { ...report, format: 'other' } as never);
    await expect(readCreditJson(path)).rejects.toThrow(/not a credit report: format/);
  });
});
