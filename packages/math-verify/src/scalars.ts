/**
 * Comparison of scalar expressions: exactly (bigint rationals), numerically (relative tolerance, rounded decimals),
 * or by sampling free variables at fixed points; and equations/inequalities as multiples of each other.
 */
import { type Node, show } from './ast.js';
import { type Value, NotEvaluableError, evaluate, freeSymbols } from './evaluate.js';
import { type Complex, type Rational, c, cAbs, cDiv, cSub, rEq, rToString } from './numeric.js';
import { substituteName } from './structure.js';

export interface CompareSettings {
  /** An explicit relative tolerance for every numeric comparison; null: exact values exactly, the rest at `FLOAT_TOL`. */
  relTol: number | null;
  /** Decimal places the problem asks for: inexact or decimal values are rounded to them before comparing; null: none. */
  roundTo: number | null;
  /** How `x%` reads: as x/100, as x, or either. */
  percent: 'either' | 'fraction' | 'strip';
  /** Whether a bare list `a, b, c` is compared as a set (any order) or in order. */
  listOrder: 'unordered' | 'ordered';
  /** Accept a decimal that agrees with an exact value in every digit it states (`1.414` for `\sqrt2`). */
  roundedDecimals: boolean;
  /** Accept an inequality pred for an interval gold (the reverse is always accepted); unset: `!strict`. */
  allowSetRelationComp?: boolean | undefined;
  /** False: also accept the same expression in other variable names. */
  strict: boolean;
}

export interface CompareResult {
  equal: boolean;
  reason: string;
}

export const EQ = (reason: string): CompareResult => ({ equal: true, reason });
export const NE = (reason: string): CompareResult => ({ equal: false, reason });

/**
 * Relative agreement of two values when at least one needs floating point (pi, roots, logs, trig, sampled
 * expressions): the noise floor of the evaluator's double arithmetic, about 9 of its 16 digits. Not a grading
 * tolerance: a decimal agrees with an irrational only when it states about 9 correct significant digits.
 */
const FLOAT_TOL = 1e-9;

/** Evaluation steps allowed per comparison (all sample points together). */
export const STEP_BUDGET = 200_000;
const SAMPLE_POINTS = 6;
const NEGATIVE_POINTS = 4;

export type Ctx = { settings: CompareSettings; budget: { steps: number } };

/** Deterministic sample points in [1.6, 3.4) per variable (positive, so radicands and logs are mostly real); a small LCG keeps them reproducible. */
function samplePoints(vars: string[], count: number, mixedSigns = false): Map<string, Complex>[] {
  let state = mixedSigns ? 0x2545f491 : 0x9e3779b9;
  const rnd = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const pts: Map<string, Complex>[] = [];
  for (let i = 0; i < count; i++) {
    const m = new Map<string, Complex>();
    for (const v of vars) m.set(v, c(mixedSigns ? (rnd() < 0.7 ? -1 : 1) * (0.3 + 3 * rnd()) : 1.6 + 1.8 * rnd()));
    pts.push(m);
  }
  return pts;
}

function percentModes(ctx: Ctx): boolean[] {
  switch (ctx.settings.percent) {
    case 'either':
      return [true, false];
    case 'fraction':
      return [true];
    case 'strip':
      return [false];
  }
}

function containsInfinity(n: Node): boolean {
  return show(n).includes('oo');
}

function hasPercent(n: Node): boolean {
  return show(n).includes('percent(');
}

function ev(n: Node, env: Map<string, Complex>, pct: boolean, ctx: Ctx): Value | null {
  try {
    return evaluate(n, { env, percentAsFraction: pct, budget: ctx.budget });
  } catch (e) {
    if (e instanceof NotEvaluableError && e.message === 'evaluation budget exhausted') throw e;
    if (e instanceof NotEvaluableError) return null;
    throw e;
  }
}

/** Fewest digits after the point among the decimal literals of `n` (Infinity when there are none). */
function minDecimals(n: Node): number {
  const m = /\d\.(\d+)/g;
  let best = Infinity;
  for (const x of show(n).matchAll(m)) best = Math.min(best, (x[1] as string).length);
  return best;
}

/** The decimal literal `n` is (possibly negated), with its digits after the point; else null. */
function decimalLiteral(n: Node): { decimals: number; sig: number } | null {
  const inner = n.k === 'neg' ? n.x : n;
  if (inner.k !== 'num' || inner.decimals < 1) return null;
  const sig = inner.text.replace('.', '').replace(/^0+/, '').length;
  return { decimals: inner.decimals, sig };
}

function close(a: Complex, b: Complex, tol: number): boolean {
  if (!Number.isFinite(a.re) || !Number.isFinite(b.re) || !Number.isFinite(a.im) || !Number.isFinite(b.im)) {
    // Equal infinities (oo, -oo) only; NaN never.
    return a.im === 0 && b.im === 0 && !Number.isFinite(a.re) && a.re === b.re && !Number.isNaN(a.re);
  }
  const d = cAbs(cSub(a, b));
  return d <= tol * Math.max(cAbs(a), cAbs(b)) || d <= 1e-14;
}

export function compareScalars(g: Node, p: Node, ctx: Ctx): CompareResult {
  const vars = [...new Set([...freeSymbols(g), ...freeSymbols(p)])].sort();
  const modes = hasPercent(g) || hasPercent(p) ? percentModes(ctx) : [true];
  let last: CompareResult = NE('different values');
  for (const pct of modes) {
    last = vars.length === 0 ? compareConstants(g, p, pct, ctx) : compareSampled(g, p, vars, pct, ctx);
    if (last.equal) return pct || modes.length === 1 ? last : EQ(`${last.reason} (percent read as a plain number)`);
  }
  if (!ctx.settings.strict) {
    const renamed = compareRenamed(g, p, ctx);
    if (renamed !== null) return renamed;
  }
  return last;
}

/** `strict: false`: the same expression in other variable names (`f(x)` vs `f(y)`), up to three variables. */
function compareRenamed(g: Node, p: Node, ctx: Ctx): CompareResult | null {
  const gv = [...freeSymbols(g)].sort();
  const pv = [...freeSymbols(p)].sort();
  if (gv.length === 0 || gv.length !== pv.length || gv.length > 3 || gv.join() === pv.join()) return null;
  const perms = (xs: string[]): string[][] =>
    xs.length <= 1 ? [xs] : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((r) => [x, ...r]));
  for (const perm of perms(gv)) {
    let q = p;
    // Rename through temporary names so that swaps (x <-> y) do not collide.
    pv.forEach((name, i) => (q = substituteName(q, name, `\u0000${i}`)));
    perm.forEach((name, i) => (q = substituteName(q, `\u0000${i}`, name)));
    const r = compareSampled(g, q, gv, true, ctx);
    if (r.equal) return EQ(`${r.reason} after renaming variables`);
  }
  return null;
}

function compareConstants(g: Node, p: Node, pct: boolean, ctx: Ctx): CompareResult {
  const empty = new Map<string, Complex>();
  const a = ev(g, empty, pct, ctx);
  const b = ev(p, empty, pct, ctx);
  if (a === null || b === null) return NE(a === null ? 'gold not evaluable' : 'pred not evaluable');
  const st = ctx.settings;
  const exact = a.ex !== null && b.ex !== null;
  // Exact values are compared exactly even past the range of a double (2^{5050}).
  if (exact && rEq(a.ex as Rational, b.ex as Rational)) return EQ('exact');
  // Overflow (a power tower) is not infinity: only answers that write \infty may compare as infinite.
  const overflow = (v: Value, n: Node): boolean => v.ex === null && !Number.isFinite(cAbs(v.v)) && !containsInfinity(n);
  if (overflow(a, g) || overflow(b, p)) return NE('value too large to compare');
  // Values that need floating point agree to its noise floor; two exact values are never "close enough" by default.
  if (!exact && close(a.v, b.v, FLOAT_TOL)) return EQ(a.dec || b.dec ? 'numeric (decimal)' : 'numeric');
  // Explicit tolerances only from here on, and only where a decimal or an inexact value is involved: integers and
  // fractions written exactly are compared exactly whatever the options (11111111100 is never 11111111101).
  const approximate = !exact || a.dec || b.dec;
  if (st.relTol !== null && approximate && close(a.v, b.v, st.relTol)) return EQ(`within relTol ${st.relTol}`);
  if (st.roundTo !== null && approximate) {
    const ra = roundScaled(a, st.roundTo);
    const rb = roundScaled(b, st.roundTo);
    if (ra !== null && ra === rb) return EQ(`equal to ${st.roundTo} decimals`);
  }
  if (st.roundedDecimals && (roundedMatch(g, a, p, b, true) || roundedMatch(p, b, g, a, false))) return EQ('rounded decimal');
  return NE(
    exact && !a.dec && !b.dec
      ? `exact values differ: ${valueToString(a)} vs ${valueToString(b)}`
      : `different values: ${valueToString(a)} vs ${valueToString(b)}`,
  );
}

/** `v` times 10^n rounded half away from zero (exactly for exact values); null for a complex or non-finite value. */
function roundScaled(v: Value, n: number): bigint | null {
  if (v.ex !== null) {
    const scaled = v.ex.n * 10n ** BigInt(n);
    const neg = scaled < 0n;
    const abs = neg ? -scaled : scaled;
    let q = abs / v.ex.d;
    if (2n * (abs % v.ex.d) >= v.ex.d) q += 1n;
    return neg ? -q : q;
  }
  if (!isRealFinite(v.v)) return null;
  const x = v.v.re * 10 ** n;
  if (!Number.isFinite(x) || Math.abs(x) > 2 ** 52) return null;
  return BigInt(Math.sign(x) * Math.round(Math.abs(x)));
}

/**
 * `roundedDecimals`: `lit` is a decimal literal with k digits after the point and at least two significant digits;
 * it matches `other` when it is `other` rounded (half away from zero, not truncated) to k decimals and `other`
 * cannot itself be written with k decimals (so 5.001 != 5). A gold literal's trailing zeros state no precision: a
 * gold `7.0` is the integer 7, which no other decimal rounds to.
 */
function roundedMatch(litNode: Node, lit: Value, otherNode: Node, other: Value, litIsGold: boolean): boolean {
  const d = decimalLiteral(litNode);
  if (d === null || d.sig < 2 || lit.v.im !== 0 || other.v.im !== 0) return false;
  if (litIsGold && lit.ex !== null && lit.ex.d === 1n) return false;
  if (other.ex) {
    const scaled = other.ex.n * 10n ** BigInt(d.decimals);
    if (scaled % other.ex.d === 0n) return false;
  }
  if (other.dec) {
    // A more precise decimal against a rounded one (0.290243 vs 0.29).
    const od = decimalLiteral(otherNode);
    if (od === null || od.decimals <= d.decimals) return false;
  }
  const r = roundScaled(other, d.decimals);
  const target = roundScaled(lit, d.decimals);
  return r !== null && r === target;
}

/** Relative tolerance of a sampled comparison: float noise, an explicit `relTol`, or (only when rounding was asked for) the digits its decimals state. */
function sampleTolerance(g: Node, p: Node, ctx: Ctx): number {
  let tol = Math.max(FLOAT_TOL, ctx.settings.relTol ?? 0);
  if (ctx.settings.roundedDecimals || ctx.settings.roundTo !== null) {
    const k = Math.min(minDecimals(g), minDecimals(p));
    if (Number.isFinite(k)) tol = Math.max(tol, 1.5 * 10 ** -k);
  }
  return tol;
}

function compareSampled(g: Node, p: Node, vars: string[], pct: boolean, ctx: Ctx): CompareResult {
  const tol = sampleTolerance(g, p, ctx);
  let valid = 0;
  for (const env of samplePoints(vars, SAMPLE_POINTS)) {
    const a = ev(g, env, pct, ctx);
    const b = ev(p, env, pct, ctx);
    if (a === null || b === null) return NE('not evaluable at a sample point');
    if (!Number.isFinite(a.v.re) || !Number.isFinite(b.v.re) || Number.isNaN(a.v.im) || Number.isNaN(b.v.im)) continue;
    if (!close(a.v, b.v, tol)) return NE(`differ at a sample point (${vars.join(', ')})`);
    valid++;
  }
  if (valid < 2) return NE('too few finite sample points');
  // Points with negative values catch sign errors that positive points hide (|x| vs x, sqrt(x^2) vs x). They count
  // only where both sides are real: principal powers of negatives are complex and say nothing about the answer.
  for (const env of samplePoints(vars, NEGATIVE_POINTS, true)) {
    const a = ev(g, env, pct, ctx);
    const b = ev(p, env, pct, ctx);
    if (a === null || b === null || !isRealFinite(a.v) || !isRealFinite(b.v)) continue;
    if (!close(a.v, b.v, tol)) return NE(`differ at a sample point with negative values (${vars.join(', ')})`);
  }
  return EQ('symbolic (sampled)');
}

function isRealFinite(v: Complex): boolean {
  return Number.isFinite(v.re) && Number.isFinite(v.im) && Math.abs(v.im) <= 1e-12 * Math.max(1, Math.abs(v.re));
}

/** f_pred = lambda * f_gold for one constant lambda != 0 (> 0 for inequalities) over the sample points. */
export function proportional(fg: Node, fp: Node, positive: boolean, ctx: Ctx): CompareResult {
  const vars = [...new Set([...freeSymbols(fg), ...freeSymbols(fp)])].sort();
  const tol = sampleTolerance(fg, fp, ctx);
  let ratio: Complex | null = null;
  let zeros = 0;
  let valid = 0;
  for (const env of samplePoints(vars, vars.length === 0 ? 1 : SAMPLE_POINTS)) {
    const a = ev(fg, env, true, ctx);
    const b = ev(fp, env, true, ctx);
    if (a === null || b === null) return NE('relation not evaluable');
    if (!Number.isFinite(cAbs(a.v)) || !Number.isFinite(cAbs(b.v))) continue;
    valid++;
    const za = cAbs(a.v) < 1e-12;
    const zb = cAbs(b.v) < 1e-12;
    if (za || zb) {
      if (za !== zb) return NE('relations differ (one side vanishes)');
      zeros++;
      continue;
    }
    const r = cDiv(b.v, a.v);
    if (ratio === null) ratio = r;
    else if (!close(ratio, r, tol)) return NE('relations are not multiples of each other');
  }
  if (valid === 0) return NE('relation not evaluable');
  if (ratio === null) return zeros > 0 ? EQ('both relations are identities') : NE('relation not evaluable');
  if (positive && !(Math.abs(ratio.im) < 1e-9 && ratio.re > 0)) return NE('inequalities point in opposite directions');
  return EQ(positive ? 'equivalent inequalities' : 'equivalent equations');
}

/** Short form of a value for reasons; huge exact values are abbreviated, never printed in full. */
function valueToString(v: Value): string {
  if (v.ex) return rToString(v.ex);
  const f = (x: number): string => (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e9 ? String(Number(x.toPrecision(10))) : x.toPrecision(6));
  return v.v.im === 0 ? f(v.v.re) : `${f(v.v.re)}${v.v.im < 0 ? '-' : '+'}${f(Math.abs(v.v.im))}i`;
}
