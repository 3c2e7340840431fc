/**
 * Transformations of parsed answers that the comparison relies on: which left sides name a quantity, how a relation
 * chain reads as a value or an interval, the expansion of \\pm, and matrix expressions.
 */
import { mapArithmeticLeaves, type Node } from './ast.js';
import { NotEvaluableError, freeSymbols } from './evaluate.js';

const SCALAR = new Set(['num', 'sym', 'const', 'add', 'neg', 'mul', 'div', 'pow', 'fn', 'call', 'bigop']);
export const isScalar = (n: Node): boolean => SCALAR.has(n.k);

/**
 * True when `n` names a quantity rather than computing one (`x`, `f(x)`, `|AB|`, `A:B`, `(p, q)`, `\frac{NO}{BO}`):
 * no numeric literal outside subscripts and arguments, and no sum.
 */
function isAssignmentTarget(n: Node): boolean {
  switch (n.k) {
    case 'sym':
    case 'call':
      return true;
    case 'fn':
      return n.name === 'abs' || n.name === 'prime' ? n.args.every(isAssignmentTarget) : false;
    case 'mul':
      return n.factors.every(isAssignmentTarget);
    case 'div':
      return isAssignmentTarget(n.num) && isAssignmentTarget(n.den);
    case 'colon':
      return n.items.every(isAssignmentTarget);
    case 'tuple':
      return n.items.every(isAssignmentTarget);
    case 'pow':
      return isAssignmentTarget(n.base) && n.exp.k === 'num';
    default:
      return false;
  }
}

/** Reads a relation chain with `\approx`: `x = 1/3 \approx 0.33` keeps `x = 1/3`; `x \approx 11` reads as `x = 11`. */
export function dropApprox(n: Extract<Node, { k: 'rel' }>): Node {
  const first = n.ops.indexOf('~');
  if (first < 0) return n;
  if (first === 0 && isAssignmentTarget(n.items[0] as Node)) {
    const ops = n.ops.map((o) => (o === '~' ? '=' : o));
    return { k: 'rel', ops, items: n.items };
  }
  if (first === 0) return n.items[0] as Node;
  return { k: 'rel', ops: n.ops.slice(0, first), items: n.items.slice(0, first + 1) };
}

/** Replaces every `a \pm b` by the set {a + b, a - b}; lists absorb the alternatives. */
export function expandPm(n: Node): Node {
  switch (n.k) {
    case 'list':
    case 'set': {
      const items = n.items.flatMap((it) => {
        const e = expandPm(it);
        return e.k === 'set' && hasPm(it) ? e.items : [e];
      });
      return { k: n.k, items };
    }
    case 'rel':
      return { k: 'rel', ops: n.ops, items: n.items.map(expandPm) };
    case 'tuple':
      return { k: 'tuple', open: n.open, close: n.close, items: n.items.map(expandPm) };
    default:
      if (!isScalar(n) && n.k !== 'pm') return n;
      if (!hasPm(n)) return n;
      return { k: 'set', items: alternatives(n, 0) };
  }
}

function hasPm(n: Node): boolean {
  switch (n.k) {
    case 'pm':
      return true;
    case 'add':
      return n.terms.some(hasPm);
    case 'mul':
      return n.factors.some(hasPm);
    case 'neg':
      return hasPm(n.x);
    case 'div':
      return hasPm(n.num) || hasPm(n.den);
    case 'pow':
      return hasPm(n.base) || hasPm(n.exp);
    case 'fn':
    case 'call':
      return n.args.some(hasPm);
    default:
      return false;
  }
}

/** All sign choices of the ± in `n`, capped at 16 alternatives. */
function alternatives(n: Node, depth: number): Node[] {
  if (depth > 4) throw new NotEvaluableError('too many \\pm');
  const cross = (parts: Node[][], build: (xs: Node[]) => Node): Node[] => {
    let acc: Node[][] = [[]];
    for (const p of parts) acc = acc.flatMap((prefix) => p.map((x) => [...prefix, x]));
    if (acc.length > 16) throw new NotEvaluableError('too many \\pm');
    return acc.map(build);
  };
  switch (n.k) {
    case 'pm': {
      const bs = alternatives(n.b, depth + 1);
      const as = n.a ? alternatives(n.a, depth + 1) : [null];
      const out: Node[] = [];
      for (const a of as)
        for (const b of bs) {
          const plus: Node = a ? { k: 'add', terms: [a, b] } : b;
          const minus: Node = a ? { k: 'add', terms: [a, { k: 'neg', x: b }] } : { k: 'neg', x: b };
          out.push(...(n.sign > 0 ? [plus, minus] : [minus, plus]));
        }
      return out;
    }
    case 'add':
      return cross(
        n.terms.map((t) => alternatives(t, depth)),
        (xs) => ({ k: 'add', terms: xs }),
      );
    case 'mul':
      return cross(
        n.factors.map((t) => alternatives(t, depth)),
        (xs) => ({ k: 'mul', factors: xs }),
      );
    case 'neg':
      return alternatives(n.x, depth).map((x) => ({ k: 'neg', x }));
    case 'div':
      return cross([alternatives(n.num, depth), alternatives(n.den, depth)], ([a, b]) => ({ k: 'div', num: a as Node, den: b as Node }));
    case 'pow':
      return cross([alternatives(n.base, depth), alternatives(n.exp, depth)], ([a, b]) => ({ k: 'pow', base: a as Node, exp: b as Node }));
    case 'fn':
      return cross(
        n.args.map((t) => alternatives(t, depth)),
        (xs) => ({ k: 'fn', name: n.name, args: xs }),
      );
    default:
      return [n];
  }
}

/** The value an `=` chain assigns when one of its left items is a name (`x = 5 + 5 = 10` -> 10), else null. */
export function assignedValue(n: Node): Node | null {
  if (n.k !== 'rel') return null;
  const r = dropApprox(n);
  if (r.k !== 'rel') return null;
  if (!r.ops.every((o) => o === '=' || o === 'in')) return null;
  if (r.items.slice(0, -1).some(isAssignmentTarget)) return r.items[r.items.length - 1] as Node;
  return null;
}

/** Pred side: an `=` chain is read as its last value (Math-Verify), `x \in S` as S. */
export function predValue(n: Node): Node {
  if (n.k !== 'rel') return n;
  const r = dropApprox(n);
  if (r.k !== 'rel') return r;
  if (r.ops.every((o) => o === '=' || o === 'in')) return r.items[r.items.length - 1] as Node;
  return r;
}

/** Converts `a < x <= b`, `x >= 5`, `0 < f(x) < 1` to an interval tuple; null when it is not such a chain. */
export function relationToInterval(n: Node): Node | null {
  if (n.k !== 'rel' || n.ops.length > 2 || !n.ops.every((o) => o === '<' || o === '<=' || o === '>' || o === '>=')) return null;
  const targets = n.items.map((it) => isAssignmentTarget(it) && freeSymbols(it).size + (it.k === 'call' ? 1 : 0) > 0);
  if (targets.filter(Boolean).length !== 1) return null;
  if (n.items.some((it, i) => !targets[i] && freeSymbols(it).size > 0)) return null;
  const inf: Node = { k: 'const', name: 'inf' };
  const ninf: Node = { k: 'neg', x: inf };
  // Orient so that every op is < or <=.
  let items = n.items;
  let ops = n.ops;
  let ts = targets;
  if (ops.every((o) => o === '>' || o === '>=')) {
    items = [...items].reverse();
    ts = [...ts].reverse();
    ops = [...ops].reverse().map((o) => (o === '>' ? '<' : '<='));
  } else if (!ops.every((o) => o === '<' || o === '<=')) return null;
  const t = ts.indexOf(true);
  const target = items[t] as Node;
  if (items.length === 3 && t === 1 && target.k === 'fn' && target.name === 'abs') {
    // a <= |z| <= b with 0 < a: [-b, -a] U [a, b].
    const [lo, , hi] = items as [Node, Node, Node];
    const neg = (x: Node): Node => ({ k: 'neg', x });
    const [o0, o1] = ops as [string, string];
    return {
      k: 'union',
      parts: [
        { k: 'tuple', open: o1 === '<' ? '(' : '[', close: o0 === '<' ? ')' : ']', items: [neg(hi), neg(lo)] },
        { k: 'tuple', open: o0 === '<' ? '(' : '[', close: o1 === '<' ? ')' : ']', items: [lo, hi] },
      ],
    };
  }
  if (items.length === 2) {
    if (t === 0) return { k: 'tuple', open: '(', close: ops[0] === '<' ? ')' : ']', items: [ninf, items[1] as Node] };
    return { k: 'tuple', open: ops[0] === '<' ? '(' : '[', close: ')', items: [items[0] as Node, inf] };
  }
  if (t !== 1) return null;
  return { k: 'tuple', open: ops[0] === '<' ? '(' : '[', close: ops[1] === '<' ? ')' : ']', items: [items[0] as Node, items[2] as Node] };
}

export const isIntervalLike = (n: Node): boolean => (n.k === 'tuple' && n.items.length === 2) || n.k === 'union';

const MAX_MATRIX_CELLS = 10_000;

/** Entries of a matrix expression (sums, scalar multiples and products of matrices), or null. */
export function matrixOf(n: Node): Node[][] | null {
  switch (n.k) {
    case 'matrix':
      return n.rows.length * (n.rows[0]?.length ?? 0) <= MAX_MATRIX_CELLS ? n.rows : null;
    case 'neg': {
      const m = matrixOf(n.x);
      return m === null ? null : m.map((r) => r.map((x): Node => ({ k: 'neg', x })));
    }
    case 'add': {
      const ms = n.terms.map(matrixOf);
      if (ms.some((m) => m === null)) return null;
      const [first, ...rest] = ms as Node[][][];
      if (!first || rest.some((m) => m.length !== first.length || m.some((r, i) => r.length !== first[i]?.length))) return null;
      return first.map((r, i) => r.map((_, j): Node => ({ k: 'add', terms: ms.map((m) => (m as Node[][])[i]?.[j] as Node) })));
    }
    case 'mul': {
      let acc: Node[][] | null = null;
      const scalars: Node[] = [];
      for (const f of n.factors) {
        if (f.k === 'matrix' || f.k === 'add' || f.k === 'neg') {
          const m = matrixOf(f);
          if (m === null) return null;
          if (acc === null) acc = m;
          else {
            const a: Node[][] = acc;
            const inner = a[0]?.length ?? 0;
            if (inner !== m.length || a.length * (m[0]?.length ?? 0) > MAX_MATRIX_CELLS) return null;
            acc = a.map((row) =>
              (m[0] ?? []).map(
                (_, j): Node => ({ k: 'add', terms: row.map((x, k): Node => ({ k: 'mul', factors: [x, (m[k] as Node[])[j] as Node] })) }),
              ),
            );
          }
        } else if (isScalar(f)) scalars.push(f);
        else return null;
      }
      if (acc === null) return null;
      return scalars.length === 0 ? acc : acc.map((r) => r.map((x): Node => ({ k: 'mul', factors: [...scalars, x] })));
    }
    default:
      return null;
  }
}

export function substituteName(n: Node, from: string, to: string): Node {
  return mapArithmeticLeaves(n, (x) => (x.k === 'sym' && x.name === from ? { k: 'sym', name: to } : x));
}
