/**
 * Exact rationals (bigint) and complex doubles: the two number systems the evaluator uses.
 * Every exact operation is bounded (`MAX_BITS`) so that a power tower or a huge factorial
 * falls back to floating point instead of allocating without limit.
 */

/** Largest numerator/denominator size, in bits, that exact arithmetic will produce. */
const MAX_BITS = 32_768;

/** A reduced fraction `n / d` with `d > 0`. */
export interface Rational {
  readonly n: bigint;
  readonly d: bigint;
}

function bigAbs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

function gcd(a: bigint, b: bigint): bigint {
  a = bigAbs(a);
  b = bigAbs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

const U32 = 0xffffffffn;

/** Bit length of |x| (0 for 0); exact up to 32 bits, else rounded up to a multiple of 4 (no string for small values). */
export function bitLength(x: bigint): number {
  if (x === 0n) return 0;
  const a = bigAbs(x);
  if (a <= U32) return 32 - Math.clz32(Number(a));
  return a.toString(16).length * 4;
}

/** Builds a reduced rational, or null when it would exceed `MAX_BITS` or divides by zero. */
export function rat(n: bigint, d: bigint = 1n): Rational | null {
  if (d === 0n) return null;
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d);
  if (g > 1n) {
    n /= g;
    d /= g;
  }
  if (bitLength(n) > MAX_BITS || bitLength(d) > MAX_BITS) return null;
  return { n, d };
}

const R_ZERO: Rational = { n: 0n, d: 1n };
const R_ONE: Rational = { n: 1n, d: 1n };

export function rAdd(a: Rational, b: Rational): Rational | null {
  return rat(a.n * b.d + b.n * a.d, a.d * b.d);
}
export function rMul(a: Rational, b: Rational): Rational | null {
  return rat(a.n * b.n, a.d * b.d);
}
export function rDiv(a: Rational, b: Rational): Rational | null {
  return rat(a.n * b.d, a.d * b.n);
}
export function rNeg(a: Rational): Rational {
  return { n: -a.n, d: a.d };
}
export function rEq(a: Rational, b: Rational): boolean {
  return a.n === b.n && a.d === b.d;
}

/** a^k for an integer k, or null when the result would be too large. */
export function rPowInt(a: Rational, k: bigint): Rational | null {
  if (k === 0n) return a.n === 0n ? null : R_ONE;
  if (a.n === 0n) return k > 0n ? R_ZERO : null;
  const neg = k < 0n;
  const e = neg ? -k : k;
  const absN = bigAbs(a.n);
  if (absN !== 1n || a.d !== 1n) {
    // Estimate the result size before computing it: bits(a)^e grows linearly in e.
    const bits = Math.max(bitLength(a.n), bitLength(a.d));
    if (e > BigInt(MAX_BITS) || (bits - 1) * Number(e) > MAX_BITS) return null;
  }
  const n = a.n ** e;
  const d = a.d ** e;
  return neg ? rat(d, n) : rat(n, d);
}

/** Converts to a double; exact for small values, and correct in magnitude for huge ones. */
export function rToNumber(a: Rational): number {
  const nb = bitLength(a.n);
  const db = bitLength(a.d);
  if (nb < 1000 && db < 1000) return Number(a.n) / Number(a.d);
  // Scale both to ~60 significant bits, then apply the exponent difference.
  const shiftN = BigInt(Math.max(0, nb - 60));
  const shiftD = BigInt(Math.max(0, db - 60));
  const n = Number(a.n >> shiftN);
  const d = Number(a.d >> shiftD);
  return (n / d) * 2 ** (Number(shiftN) - Number(shiftD));
}

/** Parses a decimal literal ("12.50", ".4", "1e-3" not supported) into an exact rational. */
export function rFromDecimal(digits: string): Rational | null {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(digits);
  if (m === null) return null;
  const intPart = m[1] ?? '';
  const frac = m[2] ?? '';
  if (intPart === '' && frac === '') return null;
  return rat(BigInt((intPart || '0') + frac), 10n ** BigInt(frac.length));
}

/** Short human form: "3", "-7/2"; huge values are abbreviated, never printed in full. */
export function rToString(a: Rational): string {
  const show = (x: bigint): string => {
    if (bitLength(x) > 256) return `${x < 0n ? '-' : ''}<${bitLength(x)}-bit integer>`;
    return x.toString();
  };
  return a.d === 1n ? show(a.n) : `${show(a.n)}/${show(a.d)}`;
}

/** n! for small n (the caller checks the bound). */
export function factorial(n: number): bigint {
  let r = 1n;
  for (let i = 2; i <= n; i++) r *= BigInt(i);
  return r;
}

/** A complex double. */
export interface Complex {
  readonly re: number;
  readonly im: number;
}

const C_ZERO: Complex = { re: 0, im: 0 };
export const c = (re: number, im = 0): Complex => ({ re, im });

export function cAdd(a: Complex, b: Complex): Complex {
  return { re: a.re + b.re, im: a.im + b.im };
}
export function cSub(a: Complex, b: Complex): Complex {
  return { re: a.re - b.re, im: a.im - b.im };
}
export function cMul(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) return { re: a.re * b.re, im: 0 };
  return { re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re };
}
export function cDiv(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) return { re: a.re / b.re, im: 0 };
  const den = b.re * b.re + b.im * b.im;
  return { re: (a.re * b.re + a.im * b.im) / den, im: (a.im * b.re - a.re * b.im) / den };
}
export function cAbs(a: Complex): number {
  return Math.hypot(a.re, a.im);
}
export function cExp(a: Complex): Complex {
  const m = Math.exp(a.re);
  if (a.im === 0) return { re: m, im: 0 };
  return { re: m * Math.cos(a.im), im: m * Math.sin(a.im) };
}
/** Principal logarithm. */
export function cLog(a: Complex): Complex {
  if (a.im === 0 && a.re > 0) return { re: Math.log(a.re), im: 0 };
  // `+ 0` turns -0 into +0: the principal argument of a negative real is +pi.
  return { re: Math.log(cAbs(a)), im: Math.atan2(a.im + 0, a.re) };
}
/** Principal power a^b. Real bases with real exponents stay real where that is defined. */
export function cPow(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) {
    if (a.re >= 0 || Number.isInteger(b.re)) return { re: a.re ** b.re, im: 0 };
  }
  if (a.re === 0 && a.im === 0) return b.re > 0 ? C_ZERO : { re: NaN, im: NaN };
  return cExp(cMul(b, cLog(a)));
}
export function cSqrt(a: Complex): Complex {
  if (a.im === 0 && a.re >= 0) return { re: Math.sqrt(a.re), im: 0 };
  return cPow(a, c(0.5));
}
/** Real n-th root for odd n of a negative real (the convention of textbooks), principal otherwise. */
export function cRoot(a: Complex, n: Complex): Complex {
  if (a.im === 0 && n.im === 0 && a.re < 0 && Number.isInteger(n.re) && Math.abs(n.re) % 2 === 1) {
    return { re: -((-a.re) ** (1 / n.re)), im: 0 };
  }
  return cPow(a, cDiv(c(1), n));
}
export function cSin(a: Complex): Complex {
  if (a.im === 0) return c(Math.sin(a.re));
  return { re: Math.sin(a.re) * Math.cosh(a.im), im: Math.cos(a.re) * Math.sinh(a.im) };
}
export function cCos(a: Complex): Complex {
  if (a.im === 0) return c(Math.cos(a.re));
  return { re: Math.cos(a.re) * Math.cosh(a.im), im: -Math.sin(a.re) * Math.sinh(a.im) };
}
export function isFiniteC(a: Complex): boolean {
  return Number.isFinite(a.re) && Number.isFinite(a.im);
}
