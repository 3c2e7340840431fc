/**
 * Equivalence of two parsed answers. Gold guides the reading of pred (as in Math-Verify):
 * an assignment gold `k = 1` accepts `1`; a pred chain `x = 2 + 3 = 5` is read as its last value;
 * an inequality gold accepts the equivalent interval. Scalars compare exactly when both are exact
 * rationals, numerically otherwise, and by random sampling when free variables remain.
 */
import { type Node, show } from './ast.js';
import { type Value, EvalError, evaluate, freeSymbols } from './evaluate.js';
import { type Complex, c, cAbs, cDiv, cSub, rEq, rToNumber, rToString } from './numeric.js';

export interface CompareSettings {
  /** Relative tolerance for inexact values (decimals, irrationals). */
  relTol: number;
  /** How `x%` reads: as x/100, as x, or either. */
  percent: 'either' | 'fraction' | 'strip';
  /** Whether a bare list `a, b, c` is compared as a set (any order) or in order. */
  listOrder: 'unordered' | 'ordered';
  /** Accept a decimal that agrees with an exact value in every digit it states (`1.414` for `\sqrt2`). */
  roundedDecimals: boolean;
  /** Accept an inequality pred for an interval gold (the reverse is always accepted). */
  allowSetRelationComp: boolean;
  /** False: also accept the same expression in other variable names. */
  strict: boolean;
}

export interface CompareResult {
  equal: boolean;
  reason: string;
}

const EQ = (reason: string): CompareResult => ({ equal: true, reason });
const NE = (reason: string): CompareResult => ({ equal: false, reason });

/** Evaluation steps allowed per comparison (all sample points together). */
const STEP_BUDGET = 200_000;
const SAMPLE_POINTS = 6;

type Ctx = { settings: CompareSettings; budget: { steps: number } };

export function compareAnswers(gold: Node, pred: Node, settings: CompareSettings): CompareResult {
  const ctx: Ctx = { settings, budget: { steps: STEP_BUDGET } };
  try {
    return compareTop(expandPm(gold), expandPm(pred), ctx);
  } catch (e) {
    if (e instanceof EvalError) return NE(`not_evaluable: ${e.message}`);
    throw e;
  }
}

// ---------------------------------------------------------------- structure helpers

const SCALAR = new Set(['num', 'sym', 'const', 'add', 'neg', 'mul', 'div', 'pow', 'fn', 'call', 'bigop']);
const isScalar = (n: Node): boolean => SCALAR.has(n.k);

/**
 * True when `n` names a quantity rather than computing one (`x`, `f(x)`, `|AB|`, `A:B`, `(p, q)`, `\frac{NO}{BO}`):
 * no numeric literal outside subscripts and arguments, and no sum.
 */
export function isAssignmentTarget(n: Node): boolean {
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
function dropApprox(n: Extract<Node, { k: 'rel' }>): Node {
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
  if (depth > 4) throw new EvalError('too many \\pm');
  const cross = (parts: Node[][], build: (xs: Node[]) => Node): Node[] => {
    let acc: Node[][] = [[]];
    for (const p of parts) acc = acc.flatMap((prefix) => p.map((x) => [...prefix, x]));
    if (acc.length > 16) throw new EvalError('too many \\pm');
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
      return cross(n.terms.map((t) => alternatives(t, depth)), (xs) => ({ k: 'add', terms: xs }));
    case 'mul':
      return cross(n.factors.map((t) => alternatives(t, depth)), (xs) => ({ k: 'mul', factors: xs }));
    case 'neg':
      return alternatives(n.x, depth).map((x) => ({ k: 'neg', x }));
    case 'div':
      return cross([alternatives(n.num, depth), alternatives(n.den, depth)], ([a, b]) => ({ k: 'div', num: a as Node, den: b as Node }));
    case 'pow':
      return cross([alternatives(n.base, depth), alternatives(n.exp, depth)], ([a, b]) => ({ k: 'pow', base: a as Node, exp: b as Node }));
    case 'fn':
      return cross(n.args.map((t) => alternatives(t, depth)), (xs) => ({ k: 'fn', name: n.name, args: xs }));
    default:
      return [n];
  }
}

/** The value an `=` chain assigns when one of its left items is a name (`x = 5 + 5 = 10` -> 10), else null. */
function assignedValue(n: Node): Node | null {
  if (n.k !== 'rel') return null;
  const r = dropApprox(n);
  if (r.k !== 'rel') return null;
  if (!r.ops.every((o) => o === '=' || o === 'in')) return null;
  if (r.items.slice(0, -1).some(isAssignmentTarget)) return r.items[r.items.length - 1] as Node;
  return null;
}

/** Pred side: an `=` chain is read as its last value (Math-Verify), `x \in S` as S. */
function predValue(n: Node): Node {
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

const isIntervalLike = (n: Node): boolean => (n.k === 'tuple' && n.items.length === 2) || n.k === 'union';

// ---------------------------------------------------------------- comparison

function compareTop(g: Node, p: Node, ctx: Ctx): CompareResult {
  if (g.k === 'rel' && p.k !== 'rel') {
    const v = assignedValue(g);
    if (v !== null) return compareNodes(expandPm(v), p, ctx);
    const dg = dropApprox(g);
    if (dg.k !== 'rel') return compareTop(dg, p, ctx);
    if (isIntervalLike(p)) {
      const iv = relationToInterval(dg);
      if (iv !== null) return compareNodes(iv, p, ctx);
    }
    return NE('gold is a relation, pred is not');
  }
  if (p.k === 'rel' && g.k !== 'rel') {
    const dp = dropApprox(p);
    if (dp.k === 'rel' && isIntervalLike(g) && relationToInterval(dp) !== null) {
      if (!ctx.settings.allowSetRelationComp) return NE('pred is an inequality, gold is an interval (allowSetRelationComp is off)');
      return compareNodes(g, relationToInterval(dp) as Node, ctx);
    }
    const v = predValue(p);
    if (v.k === 'rel') return NE('pred is a relation, gold is not');
    return compareNodes(g, expandPm(v), ctx);
  }
  return compareNodes(g, p, ctx);
}

/** Items of a collection, with `name = value` items read as their value. */
function memberValues(items: Node[]): Node[] {
  return items.map((it) => {
    const v = assignedValue(it);
    if (v !== null) return v;
    if (it.k === 'rel' && it.ops.every((o) => o === '~' || o === '=')) return predValue(it);
    return it;
  });
}

function isCollection(n: Node): boolean {
  return n.k === 'list' || n.k === 'set' || n.k === 'tuple' || n.k === 'matrix' || n.k === 'union' || n.k === 'colon';
}

function compareNodes(g: Node, p: Node, ctx: Ctx): CompareResult {
  // One-element collections read as their element (`{5}` vs 5, `\boxed{1}\boxed{1}`).
  if ((g.k === 'list' || g.k === 'set') && g.items.length === 1) return compareNodes(g.items[0] as Node, p, ctx);
  if ((p.k === 'list' || p.k === 'set') && p.items.length === 1) return compareNodes(g, p.items[0] as Node, ctx);
  if (g.k === 'rel' || p.k === 'rel') {
    if (g.k === 'rel' && p.k === 'rel') return compareRelations(g, p, ctx);
    return compareTop(g, p, ctx);
  }
  if (g.k === 'text' || p.k === 'text') return compareText(g, p);
  if (isCollection(g) || isCollection(p) || matrixOf(g) !== null || matrixOf(p) !== null) return compareCollections(g, p, ctx);
  if (g.k === 'bigop' && p.k === 'bigop') return compareBigOps(g, p, ctx);
  if (g.k === 'pm' || p.k === 'pm') return NE('unexpanded \\pm');
  return compareScalars(g, p, ctx);
}

function textOf(n: Node): string | null {
  if (n.k === 'text') return n.value;
  if (n.k === 'sym') return n.name;
  if (n.k === 'const' && n.name !== 'inf') return n.name;
  return null;
}

function compareText(g: Node, p: Node): CompareResult {
  const a = textOf(g);
  const b = textOf(p);
  if (a === null || b === null) return NE('text vs mathematics');
  const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();
  const x = norm(a);
  const y = norm(b);
  if (x === y) return EQ('same_text');
  if (x.length > 1 && y.length > 1 && x.toLowerCase() === y.toLowerCase()) return EQ('same_text_ignoring_case');
  return NE('different_text');
}

function realKey(n: Node, ctx: Ctx): number {
  try {
    const fs = freeSymbols(n);
    if (fs.size > 0 || !isScalar(n)) return NaN;
    const v = evaluate(n, { env: new Map(), percentAsFraction: ctx.settings.percent !== 'strip', budget: ctx.budget });
    return v.v.re;
  } catch {
    return NaN;
  }
}

function compareCollections(g: Node, p: Node, ctx: Ctx): CompareResult {
  if (g.k === 'matrix' || p.k === 'matrix' || matrixOf(g) !== null || matrixOf(p) !== null) return compareMatrices(g, p, ctx);
  if (g.k === 'colon' && p.k !== 'colon') return NE('ratio/time vs other');
  if (g.k === 'union' || p.k === 'union') {
    const gp = g.k === 'union' ? g.parts : [g];
    const pp = p.k === 'union' ? p.parts : [p];
    return matchUnordered(gp, pp, ctx, 'union');
  }
  if (g.k === 'colon' || p.k === 'colon') {
    if (g.k !== 'colon' || p.k !== 'colon') return NE('ratio/time vs other');
    const trim = (xs: Node[]): Node[] => (xs.length === 3 && xs[2]?.k === 'num' && xs[2].value.n === 0n ? xs.slice(0, 2) : xs);
    return matchOrdered(trim(g.items), trim(p.items), ctx, 'colon');
  }
  if (g.k === 'tuple' && p.k === 'tuple') {
    if (g.open !== p.open || g.close !== p.close) return NE(`brackets differ: ${g.open}${g.close} vs ${p.open}${p.close}`);
    return matchOrdered(g.items, p.items, ctx, 'tuple');
  }
  const gi = g.k === 'list' || g.k === 'set' || g.k === 'tuple' ? memberValues(g.items) : [g];
  const pi = p.k === 'list' || p.k === 'set' || p.k === 'tuple' ? memberValues(p.items) : [p];
  // A set against a tuple: the set in increasing order must equal the tuple ({1,3} = (1,3), {1,3} != (3,1)).
  if ((g.k === 'tuple') !== (p.k === 'tuple')) {
    const setSide = g.k === 'tuple' ? pi : gi;
    const keys = setSide.map((n) => realKey(n, ctx));
    if (keys.some(Number.isNaN)) return NE('set vs tuple with non-numeric items');
    const sorted = setSide.map((n, i) => [keys[i] as number, n] as const).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
    return g.k === 'tuple' ? matchOrdered(gi, sorted, ctx, 'set_as_tuple') : matchOrdered(sorted, pi, ctx, 'set_as_tuple');
  }
  const ordered = ctx.settings.listOrder === 'ordered' && g.k === 'list' && p.k === 'list';
  return ordered ? matchOrdered(gi, pi, ctx, 'list') : matchUnordered(gi, pi, ctx, 'set');
}

function matchOrdered(g: Node[], p: Node[], ctx: Ctx, what: string): CompareResult {
  if (g.length !== p.length) return NE(`${what}: different lengths ${g.length} vs ${p.length}`);
  for (let i = 0; i < g.length; i++) {
    const r = compareNodes(g[i] as Node, p[i] as Node, ctx);
    if (!r.equal) return NE(`${what}: item ${i + 1} differs (${r.reason})`);
  }
  return EQ(what);
}

/** Drops items equal to an earlier item (a set written with a repeated element). */
function dedupe(xs: Node[], ctx: Ctx): Node[] {
  const out: Node[] = [];
  for (const x of xs) if (!out.some((y) => show(y) === show(x) || compareNodes(y, x, ctx).equal)) out.push(x);
  return out;
}

function matchUnordered(g0: Node[], p0: Node[], ctx: Ctx, what: string): CompareResult {
  if (g0.length > 64 || p0.length > 64) return NE(`${what}: too many items`);
  const g = g0.length === p0.length ? g0 : dedupe(g0, ctx);
  const p = g0.length === p0.length ? p0 : dedupe(p0, ctx);
  if (g.length !== p.length) return NE(`${what}: different sizes ${g.length} vs ${p.length}`);
  if (g.length > 64) return NE(`${what}: too many items`);
  const used = new Array<boolean>(p.length).fill(false);
  for (let i = 0; i < g.length; i++) {
    let found = -1;
    for (let j = 0; j < p.length && found < 0; j++) {
      if (!used[j] && compareNodes(g[i] as Node, p[j] as Node, ctx).equal) found = j;
    }
    if (found < 0) return NE(`${what}: no match for ${show(g[i] as Node)}`);
    used[found] = true;
  }
  return EQ(what);
}

function compareMatrices(g: Node, p: Node, ctx: Ctx): CompareResult {
  const asRows = (n: Node): Node[][] | null => {
    if (n.k === 'tuple' || n.k === 'list') return n.items.map((x) => [x]);
    return matrixOf(n);
  };
  let gr = asRows(g);
  let pr = asRows(p);
  if (gr === null || pr === null) return NE('matrix vs non-matrix');
  // A row vector and a column vector of the same entries are the same answer.
  const flat = (m: Node[][]): Node[] | null => (m.every((r) => r.length === 1) ? m.map((r) => r[0] as Node) : m.length === 1 ? (m[0] as Node[]) : null);
  if (gr.length !== pr.length || gr.some((r, i) => r.length !== (pr as Node[][])[i]?.length)) {
    const fg = flat(gr);
    const fp = flat(pr);
    if (fg === null || fp === null) return NE('matrix dimensions differ');
    gr = fg.map((x) => [x]);
    pr = fp.map((x) => [x]);
    if (gr.length !== pr.length) return NE('matrix dimensions differ');
  }
  for (let i = 0; i < gr.length; i++) {
    const r = matchOrdered(gr[i] as Node[], (pr as Node[][])[i] as Node[], ctx, `matrix row ${i + 1}`);
    if (!r.equal) return r;
  }
  return EQ('matrix');
}

const MAX_MATRIX_CELLS = 400;

/** Entries of a matrix expression (sums, scalar multiples and products of matrices), or null. */
function matrixOf(n: Node): Node[][] | null {
  switch (n.k) {
    case 'matrix':
      return n.rows.length * (n.rows[0]?.length ?? 0) <= MAX_MATRIX_CELLS ? n.rows : null;
    case 'neg': {
      const m = matrixOf(n.x);
      return m && m.map((r) => r.map((x): Node => ({ k: 'neg', x })));
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
              (m[0] ?? []).map((_, j): Node => ({ k: 'add', terms: row.map((x, k): Node => ({ k: 'mul', factors: [x, (m[k] as Node[])[j] as Node] })) })),
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

// ---------------------------------------------------------------- relations

const FLIP: Record<string, string> = { '>': '<', '>=': '<=', '<': '<', '<=': '<=' };

function compareRelations(g: Extract<Node, { k: 'rel' }>, p: Extract<Node, { k: 'rel' }>, ctx: Ctx): CompareResult {
  const dg = dropApprox(g);
  const dp = dropApprox(p);
  if (dg.k !== 'rel' || dp.k !== 'rel') return compareNodes(dg, dp, ctx);
  // Both assign a value to a name: compare the values (`f(x) = 2x+3` vs `y = 2x+3`, `z = 1+1 = 2` vs `z = 3+3 = 2`).
  const gv = assignedValue(dg);
  const pv = assignedValue(dp);
  if (gv !== null && pv !== null) {
    const r = compareNodes(expandPm(gv), expandPm(pv), ctx);
    return r.equal ? EQ(`assignment: ${r.reason}`) : NE(`assignment: ${r.reason}`);
  }
  // Inequality chains: compare as intervals when both are intervals of one variable.
  const ig = relationToInterval(dg);
  const ip = relationToInterval(dp);
  // `x \in [a, b]` against `a <= x <= b`: gold inequality vs pred membership always; the reverse behind an option.
  const gin = dg.ops.length === 1 && dg.ops[0] === 'in' ? (dg.items[1] as Node) : null;
  const pin = dp.ops.length === 1 && dp.ops[0] === 'in' ? (dp.items[1] as Node) : null;
  if (ig !== null && pin !== null) return compareNodes(ig, pin, ctx);
  if (gin !== null && ip !== null) {
    if (!ctx.settings.allowSetRelationComp) return NE('pred is an inequality, gold is a set (allowSetRelationComp is off)');
    return compareNodes(gin, ip, ctx);
  }
  if (ig !== null && ip !== null && (dg.items.length === 3 || dp.items.length === 3)) return compareNodes(ig, ip, ctx);
  if (dg.items.length !== 2 || dp.items.length !== 2) {
    if (dg.items.length !== dp.items.length || dg.ops.join() !== dp.ops.join()) return NE('relation chains differ');
    return matchOrdered(dg.items, dp.items, ctx, 'relation chain');
  }
  let [gl, gr] = dg.items as [Node, Node];
  let [pl, pr] = dp.items as [Node, Node];
  let gop: string = dg.ops[0] as string;
  let pop: string = dp.ops[0] as string;
  if (gop === '>' || gop === '>=') [gl, gr, gop] = [gr, gl, FLIP[gop] as string];
  if (pop === '>' || pop === '>=') [pl, pr, pop] = [pr, pl, FLIP[pop] as string];
  if (gop !== pop) return NE(`relations differ: ${gop} vs ${pop}`);
  if (gop === 'in') return compareNodes(gr, pr, ctx);
  // Same left side: compare the right sides with the full rules (tolerances, sets).
  if (show(gl) === show(pl)) {
    const r = compareNodes(expandPm(gr), expandPm(pr), ctx);
    if (r.equal) return EQ(`same left side: ${r.reason}`);
  }
  if (![gl, gr, pl, pr].every(isScalar)) return NE('relation sides are not expressions');
  const diffG: Node = { k: 'add', terms: [gl, { k: 'neg', x: gr }] };
  const diffP: Node = { k: 'add', terms: [pl, { k: 'neg', x: pr }] };
  return proportional(diffG, diffP, gop === '<' || gop === '<=', ctx);
}

/**
 * Two sums (or products) over the same symbolic range, such as `\sum_{k=0}^{n-1} F_k F_{n-k-1}`: equal when the
 * bounds are the same and the bodies agree as functions of the index. Evaluable ranges are summed instead.
 */
function compareBigOps(g: Extract<Node, { k: 'bigop' }>, p: Extract<Node, { k: 'bigop' }>, ctx: Ctx): CompareResult {
  const vars = [...new Set([...freeSymbols(g), ...freeSymbols(p)])];
  if (vars.length === 0) return compareScalars(g, p, ctx);
  if (g.op !== p.op || show(g.lo) !== show(p.lo) || show(g.hi) !== show(p.hi)) return NE('different ranges');
  const rename = (b: Node, from: string): Node => (from === '__k' ? b : substituteName(b, from, '__k'));
  return compareScalars(rename(g.body, g.index), rename(p.body, p.index), ctx);
}

function substituteName(n: Node, from: string, to: string): Node {
  const go = (x: Node): Node => {
    switch (x.k) {
      case 'sym':
        return x.name === from ? { k: 'sym', name: to } : x;
      case 'add':
        return { k: 'add', terms: x.terms.map(go) };
      case 'mul':
        return { k: 'mul', factors: x.factors.map(go) };
      case 'neg':
        return { k: 'neg', x: go(x.x) };
      case 'div':
        return { k: 'div', num: go(x.num), den: go(x.den) };
      case 'pow':
        return { k: 'pow', base: go(x.base), exp: go(x.exp) };
      case 'fn':
        return { k: 'fn', name: x.name, args: x.args.map(go) };
      case 'call':
        return { k: 'call', name: x.name, args: x.args.map(go) };
      default:
        return x;
    }
  };
  return go(n);
}

// ---------------------------------------------------------------- sampling

/** Deterministic sample points in [1.6, 3.4) per variable (positive, so radicands and logs are mostly real); a small LCG keeps them reproducible. */
function samplePoints(vars: string[], count: number): Map<string, Complex>[] {
  let state = 0x9e3779b9;
  const rnd = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const pts: Map<string, Complex>[] = [];
  for (let i = 0; i < count; i++) {
    const m = new Map<string, Complex>();
    for (const v of vars) m.set(v, c(1.6 + 1.8 * rnd()));
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
    if (e instanceof EvalError && e.message === 'evaluation budget exhausted') throw e;
    if (e instanceof EvalError) return null;
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

function compareScalars(g: Node, p: Node, ctx: Ctx): CompareResult {
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
  const perms = (xs: string[]): string[][] => (xs.length <= 1 ? [xs] : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((r) => [x, ...r])));
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
  // Overflow (a power tower) is not infinity: only answers that write \infty may compare as infinite.
  const overflow = (v: Value, n: Node): boolean => !Number.isFinite(cAbs(v.v)) && !containsInfinity(n);
  if (overflow(a, g) || overflow(b, p)) return NE('value too large to compare');
  if (a.ex && b.ex) {
    if (rEq(a.ex, b.ex)) return EQ('exact');
    if (!a.dec && !b.dec) return NE(`exact values differ: ${valueToString(a)} vs ${valueToString(b)}`);
  }
  if (close(a.v, b.v, ctx.settings.relTol)) return EQ(a.dec || b.dec ? 'numeric (decimal)' : 'numeric');
  if (ctx.settings.roundedDecimals) {
    const r = roundedMatch(g, a, p, b) || roundedMatch(p, b, g, a);
    if (r) return EQ('rounded decimal');
  }
  return NE(`different values: ${valueToString(a)} vs ${valueToString(b)}`);
}

/**
 * `lit` is a decimal literal with k digits after the point and at least two significant digits; it matches
 * `other` when it is `other` rounded or truncated to k decimals and `other` cannot itself be written with
 * k decimals (so 5.001 != 5).
 */
function roundedMatch(litNode: Node, lit: Value, otherNode: Node, other: Value): boolean {
  const d = decimalLiteral(litNode);
  if (d === null || d.sig < 2 || lit.v.im !== 0 || other.v.im !== 0) return false;
  if (other.ex) {
    const scaled = other.ex.n * 10n ** BigInt(d.decimals);
    if (scaled % other.ex.d === 0n) return false;
  }
  if (other.dec) {
    // A more precise decimal against a rounded one (0.290243 vs 0.29).
    const od = decimalLiteral(otherNode);
    if (od === null || od.decimals <= d.decimals) return false;
  }
  // The literal must be `other` rounded or truncated to k decimals (1.414 and 1.4142 for sqrt 2, not 1.415).
  const scale = 10 ** d.decimals;
  const x = other.v.re * scale;
  const target = lit.v.re * scale;
  return Math.abs(Math.round(x) - target) < 1e-6 || Math.abs(Math.trunc(x) - target) < 1e-6;
}

function compareSampled(g: Node, p: Node, vars: string[], pct: boolean, ctx: Ctx): CompareResult {
  const k = Math.min(minDecimals(g), minDecimals(p));
  const tol = Number.isFinite(k) ? Math.max(ctx.settings.relTol, 1.5 * 10 ** -k) : 1e-9;
  let valid = 0;
  for (const env of samplePoints(vars, SAMPLE_POINTS)) {
    const a = ev(g, env, pct, ctx);
    const b = ev(p, env, pct, ctx);
    if (a === null || b === null) return NE('not evaluable at a sample point');
    if (!Number.isFinite(a.v.re) || !Number.isFinite(b.v.re) || Number.isNaN(a.v.im) || Number.isNaN(b.v.im)) continue;
    if (!close(a.v, b.v, tol)) return NE(`differ at a sample point (${vars.join(', ')})`);
    valid++;
  }
  return valid >= 2 ? EQ('symbolic (sampled)') : NE('too few finite sample points');
}

/** f_pred = lambda * f_gold for one constant lambda != 0 (> 0 for inequalities) over the sample points. */
function proportional(fg: Node, fp: Node, positive: boolean, ctx: Ctx): CompareResult {
  const vars = [...new Set([...freeSymbols(fg), ...freeSymbols(fp)])].sort();
  const k = Math.min(minDecimals(fg), minDecimals(fp));
  const tol = Number.isFinite(k) ? Math.max(ctx.settings.relTol, 1.5 * 10 ** -k) : 1e-8;
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
export function valueToString(v: Value): string {
  if (v.ex) return rToString(v.ex);
  const f = (x: number): string => (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e9 ? String(Number(x.toPrecision(10))) : x.toPrecision(6));
  return v.v.im === 0 ? f(v.v.re) : `${f(v.v.re)}${v.v.im < 0 ? '-' : '+'}${f(Math.abs(v.v.im))}i`;
}

export { rToNumber };
