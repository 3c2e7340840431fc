/**
 * `\sum` and `\prod` over an integer range: term by term when there are at most `MAX_BIGOP_TERMS` terms, else (and
 * for bounds that are not integers, such as a sampled symbolic `n`) by a closed form, exact where the arithmetic
 * allows: a polynomial body by Newton's forward differences, a geometric body `c r^k`, a product of a constant, of
 * powers `r^{p(k)}`, or of the index (a factorial ratio). Anything else over a long range is not evaluable.
 */
import { mapArithmeticLeaves, type Node } from './ast.js';
import { bitLength, c, cAbs, factorial, isFiniteC, rat } from './numeric.js';
import { type EvalContext, NotEvaluableError, type Value, V_ONE, V_ZERO, exact, vAdd, vDiv, vInt, vMul, vSub } from './value.js';

type Evaluate = (n: Node, ctx: EvalContext) => Value;
type Power = (b: Value, e: Value) => Value;
type BigOp = Extract<Node, { k: 'bigop' }>;

/** Most terms summed one by one. */
const MAX_BIGOP_TERMS = 2_000;
/** Past this size exact partial sums continue in floating point (every exact add pays a gcd on growing fractions). */
const SUM_EXACT_BITS = 512;
/** Highest polynomial degree summed in closed form. */
const MAX_DEGREE = 30;
const MAX_FACTORIAL = 3000;

export function bigop(n: BigOp, ctx: EvalContext, evaluate: Evaluate, power: Power): Value {
  const lo = evaluate(n.lo, ctx);
  const hi = evaluate(n.hi, ctx);
  const isInt = (v: Value): boolean => v.ex !== null && v.ex.d === 1n;
  if (isInt(lo) && isInt(hi) && hi.ex!.n - lo.ex!.n <= BigInt(MAX_BIGOP_TERMS)) return termByTerm(n, lo.ex!.n, hi.ex!.n, ctx, evaluate);
  return closedForm(n, lo, hi, ctx, evaluate, power);
}

function termByTerm(n: BigOp, lo: bigint, hi: bigint, ctx: EvalContext, evaluate: Evaluate): Value {
  let acc: Value = n.op === 'sum' ? V_ZERO : V_ONE;
  // Bound in the environment too, for a nested sum whose range uses it (`\sum_{i=1}^{3} \sum_{j=1}^{i} j`).
  const env = new Map(ctx.env);
  const inner: EvalContext = { ...ctx, env };
  for (let k = lo; k <= hi; k++) {
    env.set(n.index, c(Number(k)));
    // The index is exact: evaluate the body with it bound as a number literal.
    const body = evaluate(substituteIndex(n.body, n.index, k), inner);
    if (n.op === 'sum' && acc.ex && (bitLength(acc.ex.d) > SUM_EXACT_BITS || bitLength(acc.ex.n) > SUM_EXACT_BITS))
      acc = { ex: null, v: acc.v, dec: acc.dec };
    acc = n.op === 'sum' ? vAdd(acc, body) : vMul(acc, body);
  }
  return acc;
}

/** `n` with the index `name` replaced by the literal `k`, also inside nested sums that do not rebind it. */
function substituteIndex(n: Node, name: string, k: bigint): Node {
  const lit: Node =
    k < 0n
      ? { k: 'neg', x: { k: 'num', value: { n: -k, d: 1n }, text: String(-k), decimals: -1 } }
      : { k: 'num', value: { n: k, d: 1n }, text: String(k), decimals: -1 };
  const go = (m: Node): Node =>
    mapArithmeticLeaves(m, (x) => {
      if ((x.k === 'sym' || x.k === 'const') && x.name === name) return lit;
      if (x.k === 'bigop') return { ...x, lo: go(x.lo), hi: go(x.hi), body: x.index === name ? x.body : go(x.body) };
      return x;
    });
  return go(n);
}

/** The body at index value `k`: exactly (as a literal) for an exact integer, else with the index bound to its double. */
function bodyAt(n: BigOp, k: Value, ctx: EvalContext, evaluate: Evaluate): Value {
  if (k.ex !== null && k.ex.d === 1n) return evaluate(substituteIndex(n.body, n.index, k.ex.n), ctx);
  const env = new Map(ctx.env);
  env.set(n.index, k.v);
  return evaluate(renameIndex(n.body, n.index), { ...ctx, env });
}

/** The index as a plain symbol (a `const` named `i` or `e` inside `\sum_{i=1}` is the index, not the constant). */
function renameIndex(body: Node, index: string): Node {
  return mapArithmeticLeaves(body, (x) => (x.k === 'const' && x.name === index ? { k: 'sym', name: index } : x));
}

const mentions = (n: Node, index: string): boolean => {
  let found = false;
  mapArithmeticLeaves(n, (x) => {
    if ((x.k === 'sym' || x.k === 'const') && x.name === index) found = true;
    else if (x.k === 'bigop' && (mentions(x.lo, index) || mentions(x.hi, index) || mentions(x.body, index))) found = true;
    return x;
  });
  return found;
};

/** Degree of `n` as a polynomial in `index`, or null when it is not one (the index in a function, a denominator, an exponent). */
function degree(n: Node, index: string): number | null {
  if (!mentions(n, index)) return 0;
  switch (n.k) {
    case 'sym':
    case 'const':
      return 1;
    case 'neg':
      return degree(n.x, index);
    case 'add': {
      let d = 0;
      for (const t of n.terms) {
        const x = degree(t, index);
        if (x === null) return null;
        d = Math.max(d, x);
      }
      return d;
    }
    case 'mul': {
      let d = 0;
      for (const f of n.factors) {
        const x = degree(f, index);
        if (x === null) return null;
        d += x;
      }
      return d <= MAX_DEGREE ? d : null;
    }
    case 'div':
      return mentions(n.den, index) ? null : degree(n.num, index);
    case 'pow': {
      if (mentions(n.exp, index) || n.exp.k !== 'num' || n.exp.decimals >= 0 || n.exp.value.d !== 1n) return null;
      const b = degree(n.base, index);
      const e = Number(n.exp.value.n);
      return b === null || b * e > MAX_DEGREE ? null : b * e;
    }
    default:
      return null;
  }
}

/** `C(x, r)` = x(x-1)...(x-r+1)/r!, a polynomial in x (x need not be an integer). */
function binomial(x: Value, r: number): Value {
  let acc = V_ONE;
  for (let j = 0; j < r; j++) acc = vDiv(vMul(acc, vSub(x, vInt(BigInt(j)))), vInt(BigInt(j + 1)));
  return acc;
}

/** Sum of a polynomial body over [lo, hi] by forward differences: sum_m D^m p(lo) C(N, m+1), N = hi - lo + 1. */
function polynomialSum(n: BigOp, d: number, lo: Value, count: Value, ctx: EvalContext, evaluate: Evaluate): Value {
  let diffs: Value[] = [];
  for (let j = 0; j <= d; j++) diffs.push(bodyAt(n, vAdd(lo, vInt(BigInt(j))), ctx, evaluate));
  let sum = V_ZERO;
  for (let m = 0; m <= d; m++) {
    sum = vAdd(sum, vMul(diffs[0] as Value, binomial(count, m + 1)));
    diffs = diffs.slice(1).map((v, i) => vSub(v, diffs[i] as Value));
  }
  return sum;
}

/** `c r^{a k + b}` with c, r, a, b free of the index: the ratio of consecutive terms is constant. */
function isGeometric(n: Node, index: string): boolean {
  if (!mentions(n, index)) return true;
  switch (n.k) {
    case 'neg':
      return isGeometric(n.x, index);
    case 'mul':
      return n.factors.every((f) => isGeometric(f, index));
    case 'div':
      return isGeometric(n.num, index) && isGeometric(n.den, index);
    case 'pow':
      return !mentions(n.base, index) && degree(n.exp, index) === 1;
    default:
      return false;
  }
}

/** A closed form whose exact value was lost to overflow is refused: its float would equal values it is not. */
function checked(v: Value, hadExactInputs: boolean): Value {
  if (hadExactInputs && v.ex === null) throw new NotEvaluableError('too many terms (no exact closed form)');
  if (isFiniteC(v.v) && cAbs(v.v) !== 0 && cAbs(v.v) < 1e-280) throw new NotEvaluableError('too many terms (closed form underflows)');
  return v;
}

function closedForm(n: BigOp, lo: Value, hi: Value, ctx: EvalContext, evaluate: Evaluate, power: Power): Value {
  const count = vAdd(vSub(hi, lo), V_ONE);
  const exactBounds = lo.ex !== null && hi.ex !== null && lo.ex.d === 1n && hi.ex.d === 1n;
  if (exactBounds && count.ex!.n <= 0n) return n.op === 'sum' ? V_ZERO : V_ONE;
  if (n.op === 'sum') {
    const d = degree(n.body, n.index);
    if (d !== null) {
      const s = polynomialSum(n, d, lo, count, ctx, evaluate);
      return checked(s, exactBounds && bodyAt(n, lo, ctx, evaluate).ex !== null);
    }
    if (isGeometric(n.body, n.index)) {
      const first = bodyAt(n, lo, ctx, evaluate);
      const ratio = vDiv(bodyAt(n, vAdd(lo, V_ONE), ctx, evaluate), first);
      if (ratio.ex !== null && ratio.ex.n === ratio.ex.d) return checked(vMul(first, count), exactBounds && first.ex !== null);
      const s = vMul(first, vDiv(vSub(power(ratio, count), V_ONE), vSub(ratio, V_ONE)));
      return checked(s, exactBounds && first.ex !== null && ratio.ex !== null);
    }
    throw new NotEvaluableError('too many terms');
  }
  // Products.
  if (!mentions(n.body, n.index)) return checked(power(evaluate(n.body, ctx), count), exactBounds && evaluate(n.body, ctx).ex !== null);
  if (n.body.k === 'pow' && !mentions(n.body.base, n.index)) {
    // prod r^{p(k)} = r^{sum p(k)}
    const exponentSum: BigOp = { k: 'bigop', op: 'sum', index: n.index, lo: n.lo, hi: n.hi, body: n.body.exp };
    const base = evaluate(n.body.base, ctx);
    return checked(power(base, bigop(exponentSum, ctx, evaluate, power)), exactBounds && base.ex !== null);
  }
  if (
    (n.body.k === 'sym' || n.body.k === 'const') &&
    n.body.name === n.index &&
    exactBounds &&
    lo.ex!.n >= 1n &&
    hi.ex!.n <= BigInt(MAX_FACTORIAL)
  ) {
    return exact(rat(factorial(Number(hi.ex!.n)) / factorial(Number(lo.ex!.n) - 1)), false);
  }
  throw new NotEvaluableError('too many terms');
}
