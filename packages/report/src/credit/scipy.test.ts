import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { creditMetrics } from './metrics.js';
import type { CreditInput, CreditOptions, CreditRollout } from './input.js';

// The input and SciPy's answers, both written by tools/credit/check.py (not by this package's code)
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8'));
const raw = fixture('credit-input.json') as {
  options: CreditOptions;
  rollouts: CreditRollout[];
  methods: { name: string; credit: number[]; absAdvantage: number[]; degenerate: number[] }[];
};
type Stat = { n: number; mean: number | null; sd: number | null };
type Tests = { t: number | null; pT: number | null; wPlus: number | null; pWilcoxon: number | null };
const scipy = fixture('credit-scipy.json') as {
  status: Record<string, number>;
  values: Record<string, Record<string, (number | null)[] | (number | null)[][]>>;
  methods: Record<
    string,
    {
      wrong: Record<string, Stat>;
      degenerateWrong: Record<string, Stat>;
      errorProfile: Stat[];
      correctProfile: Stat[];
      midChain: { wrong: Stat; correct: Stat; welchT: number | null; welchP: number | null };
      uShape: Stat & Tests;
    }
  >;
  pairs: ({ a: string; b: string; metric: string } & Stat & Tests)[];
};

const input: CreditInput = {
  rollouts: raw.rollouts,
  methods: raw.methods.map((m) => ({
    name: m.name,
    credit: Float32Array.from(m.credit),
    absAdvantage: Float32Array.from(m.absAdvantage),
    degenerate: Uint8Array.from(m.degenerate),
  })),
};
const report = creditMetrics(input, raw.options);

/** Equal within 1e-9 (relative above 1), null where SciPy has none. */
function near(ours: number | null | undefined, theirs: number | null, what: string): void {
  if (theirs === null) return;
  expect(ours, what).not.toBeNull();
  expect(Math.abs(ours! - theirs) / Math.max(1, Math.abs(theirs)), `${what}: ${ours} against ${theirs}`).toBeLessThan(1e-9);
}

function nearStat(ours: { n: number; mean: number | null; sd: number | null }, theirs: Stat, what: string): void {
  expect(ours.n, `${what} n`).toBe(theirs.n);
  if (theirs.n === 0) expect(ours.mean).toBeNull();
  near(ours.mean, theirs.mean, `${what} mean`);
  near(ours.sd, theirs.sd, `${what} sd`);
}

describe('credit metrics against SciPy (tools/credit/check.py)', () => {
  test('the fixture exercises what it should: ties, degenerate, unlabelled, first-line and empty error lines, conflicts', () => {
    for (const s of ['scored', 'unlabelled', 'no_prefix', 'empty_error', 'conflict', 'correct'])
      expect(scipy.status[s], s).toBeGreaterThan(0);
    expect(report.counts.status).toEqual({ empty: 0, ...scipy.status });
    expect(report.methods.find((m) => m.name === 'coarse')!.degenerate.scored).toBeGreaterThan(0);
    expect(report.methods.find((m) => m.name === 'smooth')!.wrong.zeroMass).toBe(1);
  });

  test('every per-rollout value: AUROC (U / n1 n2), shares, segment means, middle, U contrast, both profiles', () => {
    for (const [name, cols] of Object.entries(scipy.values)) {
      const ours = report.values[name]!;
      for (const [key, col] of Object.entries(cols)) {
        if (key === 'degenerate') continue;
        (col as unknown[]).forEach((v, i) => {
          const o = (ours as Record<string, unknown[]>)[key]![i];
          if (Array.isArray(v))
            (v as (number | null)[]).forEach((x, b) =>
              x === null ? expect((o as unknown[])[b]).toBeNull() : near((o as number[])[b], x, `${name} ${key}[${i}][${b}]`),
            );
          else if (v === null) expect(o, `${name} ${key}[${i}]`).toBeNull();
          else near(o as number, v as number, `${name} ${key}[${i}]`);
        });
      }
    }
  });

  test('means and SDs over rollouts, profiles, mid-chain Welch t, U-shape tests', () => {
    for (const m of report.methods) {
      const s = scipy.methods[m.name]!;
      for (const [k, stat] of Object.entries(s.wrong)) nearStat(m.wrong[k as keyof typeof m.wrong] as Stat, stat, `${m.name} wrong.${k}`);
      for (const [k, stat] of Object.entries(s.degenerateWrong))
        nearStat(m.degenerateWrong[k as 'auroc'], stat, `${m.name} degenerate ${k}`);
      s.errorProfile.forEach((b, i) => nearStat(m.errorProfile[i]!, b, `${m.name} error bin ${i}`));
      s.correctProfile.forEach((b, i) => nearStat(m.correctProfile[i]!, b, `${m.name} profile bin ${i}`));
      nearStat(m.midChain.wrong, s.midChain.wrong, `${m.name} mid wrong`);
      nearStat(m.midChain.correct, s.midChain.correct, `${m.name} mid correct`);
      near(m.midChain.difference.welch.t, s.midChain.welchT, `${m.name} welch t`);
      near(m.midChain.difference.welch.p, s.midChain.welchP, `${m.name} welch p`);
      nearStat(m.uShape.contrast, s.uShape, `${m.name} U contrast`);
      near(m.uShape.test.t, s.uShape.t, `${m.name} U t`);
      near(m.uShape.test.pT, s.uShape.pT, `${m.name} U t p`);
      near(m.uShape.test.wPlus, s.uShape.wPlus, `${m.name} U W+`);
      near(m.uShape.test.pWilcoxon, s.uShape.pWilcoxon, `${m.name} U Wilcoxon p`);
    }
  });

  test('paired differences between methods on the same rollouts: mean, paired t, Wilcoxon', () => {
    expect(report.pairs.map((p) => [p.a, p.b, p.metric])).toEqual(scipy.pairs.map((p) => [p.a, p.b, p.metric]));
    report.pairs.forEach((p, i) => {
      const s = scipy.pairs[i]!;
      const what = `${p.a} - ${p.b} ${p.metric}`;
      nearStat(p.difference, s, what);
      near(p.test.t, s.t, `${what} t`);
      near(p.test.pT, s.pT, `${what} t p`);
      near(p.test.wPlus, s.wPlus, `${what} W+`);
      near(p.test.pWilcoxon, s.pWilcoxon, `${what} Wilcoxon p`);
    });
    // the comparison is not vacuous: some p-values are small, some large
    const ps = scipy.pairs.map((p) => p.pWilcoxon).filter((p): p is number => p !== null);
    expect(Math.min(...ps)).toBeLessThan(0.05);
    expect(Math.max(...ps)).toBeGreaterThan(0.05);
  });
});
