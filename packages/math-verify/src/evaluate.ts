/**
 * Evaluates a scalar `Node` to an exact rational where possible and to a complex double always.
 * Free variables take values from `env`; a step budget bounds every evaluation.
 */
import type { Node } from './ast.js';
import { bigop } from './bigop.js';
import { type EvalContext, NotEvaluableError, type Value, V_ONE, V_ZERO, approx, exact, vAdd, vDiv, vMul, vNeg } from './value.js';
import {
  type Complex,
  type Rational,
  bitLength,
  c,
  cAbs,
  cAdd,
  cCos,
  cDiv,
  cExp,
  cLog,
  cMul,
  cPow,
  cRoot,
  cSin,
  cSqrt,
  factorial,
  rDiv,
  rNeg,
  rPowInt,
  rToNumber,
  rat,
} from './numeric.js';

export { NotEvaluableError } from './value.js';
export type { EvalContext, Value } from './value.js';

const MAX_FACTORIAL = 3000;

/** Collects the free variable names of a scalar node (unknown functions are not variables). */
export function freeSymbols(n: Node, out: Set<string> = new Set(), bound: ReadonlySet<string> = new Set()): Set<string> {
  switch (n.k) {
    case 'sym':
      if (!bound.has(n.name)) out.add(n.name);
      break;
    case 'add':
      for (const t of n.terms) freeSymbols(t, out, bound);
      break;
    case 'mul':
      for (const t of n.factors) freeSymbols(t, out, bound);
      break;
    case 'neg':
      freeSymbols(n.x, out, bound);
      break;
    case 'div':
      freeSymbols(n.num, out, bound);
      freeSymbols(n.den, out, bound);
      break;
    case 'pow':
      freeSymbols(n.base, out, bound);
      freeSymbols(n.exp, out, bound);
      break;
    case 'fn':
    case 'call':
      for (const t of n.args) freeSymbols(t, out, bound);
      break;
    case 'pm':
      if (n.a) freeSymbols(n.a, out, bound);
      freeSymbols(n.b, out, bound);
      break;
    case 'bigop': {
      freeSymbols(n.lo, out, bound);
      freeSymbols(n.hi, out, bound);
      freeSymbols(n.body, out, new Set([...bound, n.index]));
      break;
    }
    case 'tuple':
    case 'set':
    case 'list':
      for (const t of n.items) freeSymbols(t, out, bound);
      break;
    case 'union':
      for (const t of n.parts) freeSymbols(t, out, bound);
      break;
    case 'rel':
      for (const t of n.items) freeSymbols(t, out, bound);
      break;
    case 'matrix':
      for (const r of n.rows) for (const t of r) freeSymbols(t, out, bound);
      break;
    case 'colon':
      for (const t of n.items) freeSymbols(t, out, bound);
      break;
    default:
      break;
  }
  return out;
}

/** A fixed smooth pseudo-random function per name, so `f(x)` equals `f(x)` and differs from `f(y)` and `g(x)`. */
function unknownFunction(name: string, args: Complex[]): Complex {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  let acc = c((h % 1000) / 997);
  args.forEach((a, j) => {
    const w = 0.7 + ((h >>> (j + 3)) % 101) / 97;
    acc = cAdd(acc, cMul(c(1 + j * 0.37), cSin(cAdd(cMul(c(w), a), c(0.3 * (j + 1))))));
  });
  return acc;
}

/** Integer square root (floor). */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  if (bitLength(n) > 100) {
    x = 1n << BigInt(Math.ceil(bitLength(n) / 2));
  }
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) {
      // Newton from above converges; fix up rounding.
      while (x * x > n) x--;
      while ((x + 1n) * (x + 1n) <= n) x++;
      return x;
    }
    x = y;
  }
}

function exactSqrt(r: Rational): Rational | null {
  if (r.n < 0n) return null;
  const a = isqrt(r.n);
  const b = isqrt(r.d);
  return a * a === r.n && b * b === r.d ? rat(a, b) : null;
}

export function evaluate(n: Node, ctx: EvalContext): Value {
  if (--ctx.budget.steps < 0) throw new NotEvaluableError('evaluation budget exhausted');
  switch (n.k) {
    case 'num':
      return { ex: n.value, v: c(rToNumber(n.value)), dec: n.decimals >= 0 };
    case 'sym': {
      const v = ctx.env.get(n.name);
      if (v === undefined) throw new NotEvaluableError(`free variable ${n.name}`);
      return approx(v, false);
    }
    case 'const':
      switch (n.name) {
        case 'pi':
          return approx(c(Math.PI), false);
        case 'e':
          return approx(c(Math.E), false);
        case 'i':
          return approx(c(0, 1), false);
        case 'inf':
          return approx(c(Infinity), false);
      }
      throw new NotEvaluableError(`unknown constant ${(n as { name: string }).name}`);
    case 'add':
      return n.terms.reduce((acc: Value, t) => vAdd(acc, evaluate(t, ctx)), V_ZERO);
    case 'neg':
      return vNeg(evaluate(n.x, ctx));
    case 'mul':
      return n.factors.reduce((acc: Value, t) => vMul(acc, evaluate(t, ctx)), V_ONE);
    case 'div':
      return vDiv(evaluate(n.num, ctx), evaluate(n.den, ctx));
    case 'pow':
      return power(evaluate(n.base, ctx), evaluate(n.exp, ctx));
    case 'fn':
      return fn(n.name, n.args, ctx);
    case 'call':
      if (n.name.startsWith('base')) return baseNumber(n);
      return approx(
        unknownFunction(
          n.name,
          n.args.map((a) => evaluate(a, ctx).v),
        ),
        false,
      );
    case 'bigop':
      return bigop(n, ctx, evaluate, power);
    case 'pm':
      throw new NotEvaluableError('\\pm must be expanded before evaluation');
    default:
      throw new NotEvaluableError(`${n.k} is not a number`);
  }
}

function power(b: Value, e: Value): Value {
  const dec = b.dec || e.dec;
  if (b.ex && e.ex) {
    if (e.ex.d === 1n) {
      const r = rPowInt(b.ex, e.ex.n);
      if (r !== null) return exact(r, dec);
    } else if (e.ex.d === 2n && e.ex.n > 0n && e.ex.n < 64n) {
      const root = exactSqrt(b.ex);
      if (root !== null) {
        const r = rPowInt(root, e.ex.n);
        if (r !== null) return exact(r, dec);
      }
    }
    // Too large to keep exact: the magnitude is still right in floating point (possibly Infinity).
  }
  // Principal branch for powers, as sympy: (-1)^(1/3) is complex. Only \sqrt[3]{} takes the real root.
  return approx(cPow(b.v, e.v), dec);
}

function toInt(v: Value, what: string): bigint {
  if (v.ex === null || v.ex.d !== 1n) throw new NotEvaluableError(`${what} is not an integer`);
  return v.ex.n;
}

function baseNumber(n: Extract<Node, { k: 'call' }>): Value {
  const base = Number(n.name.slice(4));
  const digits = n.args[0]?.k === 'text' ? n.args[0].value : '';
  if (!(base >= 2 && base <= 36)) throw new NotEvaluableError('bad base');
  let acc = 0n;
  for (const ch of digits) {
    const d = parseInt(ch, 36);
    if (!(d < base)) throw new NotEvaluableError(`digit ${ch} not valid in base ${base}`);
    acc = acc * BigInt(base) + BigInt(d);
  }
  return exact(rat(acc), false);
}

function real(v: Value, f: (x: number) => number): Value {
  if (v.v.im !== 0) throw new NotEvaluableError('complex argument');
  return approx(c(f(v.v.re)), v.dec);
}

function fn(name: string, args: Node[], ctx: EvalContext): Value {
  const a = evaluate(args[0] as Node, ctx);
  switch (name) {
    case 'sin':
      return approx(cSin(a.v), a.dec);
    case 'cos':
      return approx(cCos(a.v), a.dec);
    case 'tan':
      return approx(cDiv(cSin(a.v), cCos(a.v)), a.dec);
    case 'sec':
      return approx(cDiv(c(1), cCos(a.v)), a.dec);
    case 'csc':
      return approx(cDiv(c(1), cSin(a.v)), a.dec);
    case 'cot':
      return approx(cDiv(cCos(a.v), cSin(a.v)), a.dec);
    case 'arcsin':
      return real(a, Math.asin);
    case 'arccos':
      return real(a, Math.acos);
    case 'arctan':
      return real(a, Math.atan);
    case 'sinh':
      return real(a, Math.sinh);
    case 'cosh':
      return real(a, Math.cosh);
    case 'tanh':
      return real(a, Math.tanh);
    case 'exp':
      return approx(cExp(a.v), a.dec);
    case 'ln':
      return approx(cLog(a.v), a.dec);
    case 'log10':
      return approx(cDiv(cLog(a.v), c(Math.LN10)), a.dec);
    case 'log': {
      // \log without a base is natural (sympy's reading); \log_b x divides by ln b.
      if (args.length === 1) return approx(cLog(a.v), a.dec);
      const b = evaluate(args[1] as Node, ctx);
      return approx(cDiv(cLog(a.v), cLog(b.v)), a.dec || b.dec);
    }
    case 'sqrt': {
      if (args.length === 1) {
        const r = a.ex ? exactSqrt(a.ex) : null;
        return r ? exact(r, a.dec) : approx(cSqrt(a.v), a.dec);
      }
      const idx = evaluate(args[1] as Node, ctx);
      return approx(cRoot(a.v, idx.v), a.dec || idx.dec);
    }
    case 'abs':
      if (a.ex) return exact(a.ex.n < 0n ? rNeg(a.ex) : a.ex, a.dec);
      return approx(c(cAbs(a.v)), a.dec);
    case 'floor':
    case 'ceil': {
      if (a.ex) {
        const q = a.ex.n / a.ex.d;
        const fl = a.ex.n < 0n && q * a.ex.d !== a.ex.n ? q - 1n : q;
        const r = name === 'floor' ? fl : fl * a.ex.d === a.ex.n ? fl : fl + 1n;
        return exact(rat(r), a.dec);
      }
      return real(a, name === 'floor' ? Math.floor : Math.ceil);
    }
    case 'fact': {
      const k = toInt(a, 'factorial argument');
      if (k < 0n || k > BigInt(MAX_FACTORIAL)) throw new NotEvaluableError('factorial out of range');
      return exact(rat(factorial(Number(k))), a.dec);
    }
    case 'binom': {
      const nn = toInt(a, 'binomial n');
      const kk = toInt(evaluate(args[1] as Node, ctx), 'binomial k');
      if (kk < 0n || nn < 0n || kk > nn || nn > BigInt(MAX_FACTORIAL)) throw new NotEvaluableError('binomial out of range');
      let r = 1n;
      for (let j = 0n; j < kk; j++) r = (r * (nn - j)) / (j + 1n);
      return exact(rat(r), false);
    }
    case 'percent':
      if (!ctx.percentAsFraction) return a;
      return a.ex ? exact(rDiv(a.ex, { n: 100n, d: 1n }), a.dec) : approx(cDiv(a.v, c(100)), a.dec);
    case 'deg':
      // Degrees inside a trigonometric argument are converted to radians.
      return approx(cMul(a.v, c(Math.PI / 180)), a.dec);
    case 'degnote':
      return a;
    case 'det':
      throw new NotEvaluableError('determinants are not evaluated');
    default:
      throw new NotEvaluableError(`unknown function ${name}`);
  }
}
