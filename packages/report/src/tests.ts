/**
 * The tests of a comparison of two estimators over seeds: the paired t (runs of one seed share the initial
 * checkpoint, the problem order and the evaluation samples, so they are pairs), the exact Wilcoxon signed-rank
 * test (the GRAIL paper's), Welch's t when the seeds differ, Holm's adjustment across contrasts, and the pairs a
 * paired t needs for 80% power. Pure functions; checked against SciPy (tools/fixtures/report/paired.py).
 */
import { noncentralTCdf, normalCdf, studentTQuantile, studentTwoSided } from './distributions.js';

/** A paired t test of mean(d) = 0 on the per-seed differences d (a - b). */
export interface PairedT {
  /** number of pairs */
  n: number;
  /** mean difference */
  diff: number;
  /** sample SD of the differences (n - 1) */
  sd: number;
  /** standard error of the mean difference: sd / sqrt(n) */
  se: number;
  t: number;
  df: number;
  /** two-sided p */
  p: number;
  /** 95% t confidence interval of the mean difference */
  ci: [number, number];
}

export function pairedT(d: readonly number[]): PairedT {
  const n = d.length;
  const diff = d.reduce((a, x) => a + x, 0) / n;
  const sd = n < 2 ? Number.NaN : Math.sqrt(d.reduce((a, x) => a + (x - diff) ** 2, 0) / (n - 1));
  const se = sd / Math.sqrt(n);
  const df = n - 1;
  // identical differences: no spread, so t is infinite unless they are all zero
  const t = se === 0 ? (diff === 0 ? 0 : Math.sign(diff) * Infinity) : diff / se;
  const p = n < 2 ? Number.NaN : se === 0 ? (diff === 0 ? 1 : 0) : studentTwoSided(t, df);
  const half = n < 2 ? Number.NaN : studentTQuantile(0.975, df) * se;
  return { n, diff, sd, se, t, df, p, ci: [diff - half, diff + half] };
}

/** Welch's unequal-variance t test of mean(a) = mean(b) (for samples that are not pairs). */
export interface Welch {
  diff: number;
  se: number;
  t: number;
  /** Welch-Satterthwaite degrees of freedom */
  df: number;
  p: number;
  ci: [number, number];
}

export function welch(a: readonly number[], b: readonly number[]): Welch {
  const m = (x: readonly number[]) => x.reduce((s, v) => s + v, 0) / x.length;
  const v = (x: readonly number[], mx: number) => x.reduce((s, y) => s + (y - mx) ** 2, 0) / (x.length - 1);
  const [ma, mb] = [m(a), m(b)];
  const [va, vb] = [v(a, ma) / a.length, v(b, mb) / b.length];
  const se = Math.sqrt(va + vb);
  const df = (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1));
  const diff = ma - mb;
  const t = diff / se;
  const p = se === 0 ? (diff === 0 ? 1 : 0) : studentTwoSided(t, df);
  const half = studentTQuantile(0.975, df) * se;
  return { diff, se, t, df, p, ci: [diff - half, diff + half] };
}

/**
 * The exact two-sided Wilcoxon signed-rank p of d (a - b). Zero differences (|d| <= 1e-12) are dropped, as in
 * Wilcoxon's original rule (SciPy's zero_method "wilcox", R's wilcox.test); tied |d| get their average rank, and the
 * null distribution is enumerated over those tied ranks (exact with ties; SciPy's "exact" assumes no ties).
 * p = min(1, 2 min(P(W+ <= w), P(W+ >= w))). With n nonzero pairs, the smallest possible p is 2 / 2^n.
 */
export function wilcoxonExact(d: readonly number[]): { n: number; wPlus: number; p: number } {
  const nz = d.filter((x) => Math.abs(x) > 1e-12);
  const n = nz.length;
  if (n === 0) return { n, wPlus: 0, p: 1 };
  const order = nz.map((x, i) => ({ a: Math.abs(x), i })).sort((x, y) => x.a - y.a);
  // doubled ranks are integers even when ties average them
  const rank2 = new Array<number>(n);
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && Math.abs(order[j + 1]!.a - order[i]!.a) <= 1e-12 * Math.max(1, order[i]!.a)) j++;
    for (let k = i; k <= j; k++) rank2[order[k]!.i] = i + j + 2;
    i = j + 1;
  }
  const total = rank2.reduce((a, r) => a + r, 0);
  const w2 = nz.reduce((a, x, i) => a + (x > 0 ? rank2[i]! : 0), 0);
  // counts[s]: the sign patterns whose doubled W+ is s
  let counts = new Float64Array(total + 1);
  counts[0] = 1;
  for (const r of rank2) {
    const next = new Float64Array(total + 1);
    for (let s = 0; s <= total; s++) {
      const c = counts[s]!;
      if (c === 0) continue;
      next[s] += c;
      next[s + r] += c;
    }
    counts = next;
  }
  const all = 2 ** n;
  let below = 0;
  let above = 0;
  for (let s = 0; s <= total; s++) {
    if (s <= w2) below += counts[s]!;
    if (s >= w2) above += counts[s]!;
  }
  return { n, wPlus: w2 / 2, p: Math.min(1, (2 * Math.min(below, above)) / all) };
}

/** Holm's step-down adjustment: the adjusted p of each input p, in the input order (family-wise error control). */
export function holm(ps: readonly number[]): number[] {
  const order = ps.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p);
  const out = new Array<number>(ps.length);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (ps.length - rank) * p));
    out[i] = running;
  });
  return out;
}

/** The power of a two-sided paired t test with n pairs against a true mean difference `delta` (SD `sd`). */
export function pairedPower(n: number, delta: number, sd: number, alpha = 0.05): number {
  const df = n - 1;
  const crit = studentTQuantile(1 - alpha / 2, df);
  const nc = delta / (sd / Math.sqrt(n));
  return 1 - noncentralTCdf(crit, df, nc) + noncentralTCdf(-crit, df, nc);
}

/** The fewest pairs (>= 2) whose two-sided paired t at `alpha` has `power` against `delta`; null beyond 10,000. */
export function pairsForPower(delta: number, sd: number, power = 0.8, alpha = 0.05): number | null {
  if (!(sd > 0)) return 2;
  // the normal approximation is a lower bound to start from: the t needs a little more
  const z = ((1.959963984540054 + 0.8416212335729143) * sd) / Math.abs(delta);
  let n = Math.max(2, Math.floor(z * z) - 1);
  // a tiny delta: the bound alone is past the limit (stepping down from 1e13 one pair at a time never ended)
  if (!(n <= 10_000)) return null;
  while (n > 2 && pairedPower(n - 1, delta, sd, alpha) >= power) n--;
  for (; n <= 10_000; n++) if (pairedPower(n, delta, sd, alpha) >= power) return n;
  return null;
}

/**
 * Wilcoxon's signed-rank test of d (a - b) by its normal approximation, for the thousands of pairs where the
 * exact distribution is too costly: exact zeros dropped, tied |d| at their average rank with the variance's tie
 * correction, no continuity correction. z = (W+ - n(n+1)/4) / sigma, two-sided p = 2 (1 - Phi(|z|)): SciPy's
 * `wilcoxon(d, zero_method='wilcox', correction=False, method='approx')`.
 */
export function wilcoxonNormal(d: ArrayLike<number>): { n: number; wPlus: number; z: number; p: number } {
  const nz: number[] = [];
  for (let i = 0; i < d.length; i++) if (d[i] !== 0) nz.push(d[i]!);
  const n = nz.length;
  if (n === 0) return { n, wPlus: 0, z: Number.NaN, p: Number.NaN };
  const order = nz.map((_, i) => i).sort((x, y) => Math.abs(nz[x]!) - Math.abs(nz[y]!));
  let wPlus = 0;
  let ties = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && Math.abs(nz[order[j + 1]!]!) === Math.abs(nz[order[i]!]!)) j++;
    const rank = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) if (nz[order[k]!]! > 0) wPlus += rank;
    const t = j - i + 1;
    ties += t * t * t - t;
    i = j + 1;
  }
  const mean = (n * (n + 1)) / 4;
  const sigma = Math.sqrt((n * (n + 1) * (2 * n + 1) - ties / 2) / 24);
  const z = sigma > 0 ? (wPlus - mean) / sigma : Number.NaN;
  return { n, wPlus, z, p: sigma > 0 ? 2 * normalCdf(-Math.abs(z)) : Number.NaN };
}
