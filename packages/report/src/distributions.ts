/**
 * The distributions the comparison's tests need, in double precision: the normal, Student's t and the noncentral
 * t. Checked against SciPy (tools/fixtures/report/paired.py writes the fixture the tests read).
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7: about 15 significant digits). */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta (modified Lentz). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return h;
}

/** The regularized incomplete beta I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // the fraction converges fast on this side of the mean; the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) gives the other
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** The regularized lower incomplete gamma P(a, x): series below a + 1, continued fraction above. */
function lowerGamma(a: number, x: number): number {
  if (x <= 0) return 0;
  const lead = a * Math.log(x) - x - logGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 10_000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-17) break;
    }
    return sum * Math.exp(lead);
  }
  return 1 - upperGammaFraction(a, x) * Math.exp(lead);
}

function upperGammaFraction(a: number, x: number): number {
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return h;
}

/** erfc(x), through the incomplete gamma (erfc x = Q(1/2, x^2)), accurate in the tails too. */
function erfc(x: number): number {
  if (x < 0) return 2 - erfc(-x);
  if (x === 0) return 1;
  const x2 = x * x;
  return x2 < 1.5 ? 1 - lowerGamma(0.5, x2) : upperGammaFraction(0.5, x2) * Math.exp(0.5 * Math.log(x2) - x2 - logGamma(0.5));
}

/** Φ(z), the standard normal CDF. */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

/** Φ⁻¹(p) by bisection then Newton steps on Φ (to double precision; p in (0, 1)). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) return p === 0 ? -Infinity : p === 1 ? Infinity : Number.NaN;
  let lo = -40;
  let hi = 40;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid) < p) lo = mid;
    else hi = mid;
  }
  let z = (lo + hi) / 2;
  for (let i = 0; i < 3; i++) {
    const pdf = Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);
    if (pdf === 0) break;
    z -= (normalCdf(z) - p) / pdf;
  }
  return z;
}

/** P(T <= t) for Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * studentTwoSided(t, df);
  return t > 0 ? 1 - tail : tail;
}

/** The two-sided p of a t statistic: P(|T| >= |t|). */
export function studentTwoSided(t: number, df: number): number {
  if (Number.isNaN(t)) return Number.NaN;
  if (!Number.isFinite(t)) return 0;
  const t2 = t * t;
  // near t = 0, df / (df + t²) rounds to 1 and its complement loses every digit: take 1 - P(|T| < |t|) there
  return t2 < df ? 1 - incompleteBeta(t2 / (df + t2), 0.5, df / 2) : incompleteBeta(df / (df + t2), df / 2, 0.5);
}

/** The t quantile: the x with P(T <= x) = p (bisection on the CDF, then it is exact to ~1e-12). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) return p === 0 ? -Infinity : p === 1 ? Infinity : Number.NaN;
  let lo = -1;
  let hi = 1;
  while (studentTCdf(lo, df) > p) lo *= 2;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-13 * Math.max(1, Math.abs(hi)); i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * P(T <= t) for the noncentral t with `df` degrees of freedom and noncentrality `delta`: T = (Z + δ) / sqrt(V / df)
 * with V ~ χ²_df, so P(T <= t) = E[Φ(t·S - δ)] with S = sqrt(V / df). The expectation is integrated over S by
 * Simpson's rule on a grid that covers its density (mode near 1, width about 1 / sqrt(2 df)) to 1e-10.
 */
export function noncentralTCdf(t: number, df: number, delta: number): number {
  // density of S = sqrt(V/df): f(s) = 2 (df/2)^(df/2) / Γ(df/2) s^(df-1) exp(-df s² / 2)
  const logNorm = Math.log(2) + (df / 2) * Math.log(df / 2) - logGamma(df / 2);
  // at s = 0 the density is 0, except for df = 1 (s^0)
  const density = (s: number) =>
    s < 0 || (s === 0 && df > 1) ? 0 : Math.exp(logNorm + (df === 1 ? 0 : (df - 1) * Math.log(s)) - (df * s * s) / 2);
  const width = 1 / Math.sqrt(2 * df);
  const top = 1 + 40 * width + 10 / df;
  const steps = 4000;
  const h = top / steps;
  let sum = 0;
  for (let i = 0; i <= steps; i++) {
    const s = i * h;
    const w = i === 0 || i === steps ? 1 : i % 2 === 1 ? 4 : 2;
    sum += w * density(s) * normalCdf(t * s - delta);
  }
  return Math.min(1, Math.max(0, (sum * h) / 3));
}
