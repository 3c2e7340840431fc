/**
 * The contrasts of `rlvr compare`: one estimator's final accuracy against another's, tested. Runs of the same seed
 * are pairs (same initial checkpoint, problem order and evaluation samples), so two rows with the same seeds get the
 * paired t and the exact Wilcoxon signed-rank test; rows whose seeds differ get Welch's t. The primary contrast,
 * declared up front, is judged at alpha unadjusted; the secondaries are Holm-adjusted among themselves.
 */
import { holm, pairedT, pairsForPower, welch, wilcoxonExact } from './tests.js';

/** The level every verdict uses. */
export const ALPHA = 0.05;

/** The true differences, in accuracy (0.01 = 1 point), whose pairs for 80% power an undecided contrast reports. */
export const POWER_DELTAS = [0.01, 0.02, 0.03] as const;

export interface Contrast {
  /** the estimator whose accuracy is first: diff = a - b */
  a: string;
  b: string;
  role: 'primary' | 'secondary';
  /** `paired t`: the same seeds on both sides (the pairs are those seeds); `Welch`: the seed lists differ */
  test: 'paired t' | 'Welch';
  /** the seeds of the pairs (paired), or every seed of either side (Welch) */
  seeds: number[];
  /** mean difference in final accuracy (fraction; 0.019 = 1.9 points) */
  diff: number;
  /** SD of the per-seed differences (paired); null for Welch */
  sdDiff: number | null;
  /** standard error of diff */
  se: number;
  /** 95% t confidence interval of diff */
  ci: [number, number];
  /** two-sided p of `test` */
  p: number;
  /** the exact Wilcoxon signed-rank p (the GRAIL paper's test; zero differences dropped); null for Welch */
  wilcoxonP: number | null;
  /** the p the verdict reads: p for the primary, Holm-adjusted over the secondaries for a secondary */
  adjustedP: number;
  /** adjustedP < ALPHA; null when a side has one seed (nothing to test) */
  detected: boolean | null;
  /**
   * when not detected and paired: pairs a paired t needs for 80% power at 1, 2 and 3 points, from sdDiff; null when
   * the differences do not vary (sdDiff 0: a spread of 0 from a few pairs is no basis for a power estimate)
   */
  pairsFor80: { delta: number; pairs: number | null }[] | null;
}

/** A contrast before the adjustment: the test of a against b on final accuracy by seed. */
function test(a: string, b: string, role: Contrast['role'], accA: Map<number, number>, accB: Map<number, number>) {
  const same = accA.size === accB.size && [...accA.keys()].every((s) => accB.has(s));
  if (same) {
    const seeds = [...accA.keys()].sort((x, y) => x - y);
    const d = seeds.map((s) => accA.get(s)! - accB.get(s)!);
    const t = pairedT(d);
    return {
      a,
      b,
      role,
      test: 'paired t' as const,
      seeds,
      diff: t.diff,
      sdDiff: seeds.length < 2 ? null : t.sd,
      se: t.se,
      ci: t.ci,
      p: t.p,
      wilcoxonP: seeds.length < 2 ? null : wilcoxonExact(d).p,
    };
  }
  const w = welch([...accA.values()], [...accB.values()]);
  return {
    a,
    b,
    role,
    test: 'Welch' as const,
    seeds: [...new Set([...accA.keys(), ...accB.keys()])].sort((x, y) => x - y),
    diff: w.diff,
    sdDiff: null,
    se: w.se,
    ci: w.ci,
    p: accA.size < 2 || accB.size < 2 ? Number.NaN : w.p,
    wilcoxonP: null,
  };
}

/**
 * Tests `primary` and then each of `secondary` (pairs [a, b]) on the final accuracies `acc` (estimator -> seed ->
 * accuracy). A contrast with a one-seed side has p NaN and `detected: null`.
 */
export function compareContrasts(
  acc: ReadonlyMap<string, Map<number, number>>,
  primary: readonly [string, string],
  secondary: readonly (readonly [string, string])[],
): Contrast[] {
  const get = (e: string) => {
    const m = acc.get(e);
    if (m === undefined) throw new Error(`contrast: ${e} is not among the estimators`);
    return m;
  };
  const raw = [
    test(primary[0], primary[1], 'primary', get(primary[0]), get(primary[1])),
    ...secondary.map(([a, b]) => test(a, b, 'secondary', get(a), get(b))),
  ];
  // Holm over the secondaries that can be tested; NaN ones stay NaN
  const testable = raw.slice(1).filter((c) => Number.isFinite(c.p));
  const adjusted = holm(testable.map((c) => c.p));
  return raw.map((c): Contrast => {
    const k = testable.indexOf(c);
    const adjustedP = c.role === 'primary' ? c.p : k < 0 ? Number.NaN : adjusted[k]!;
    const detected = Number.isFinite(adjustedP) ? adjustedP < ALPHA : null;
    const pairsFor80 =
      detected === false && c.sdDiff !== null && c.sdDiff > 0
        ? POWER_DELTAS.map((delta) => ({ delta, pairs: pairsForPower(delta, c.sdDiff!) }))
        : null;
    return { ...c, adjustedP, detected, pairsFor80 };
  });
}
