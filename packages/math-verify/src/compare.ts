/**
 * Equivalence of two parsed answers. Gold guides the reading of pred (as in Math-Verify):
 * an assignment gold `k = 1` accepts `1`; a pred chain `x = 2 + 3 = 5` is read as its last value;
 * an inequality gold accepts the equivalent interval. Scalars compare exactly when both are exact
 * rationals, numerically otherwise, and by random sampling when free variables remain.
 */
import { type Node, show } from './ast.js';
import { NotEvaluableError, evaluate, freeSymbols } from './evaluate.js';
import { type CompareResult, type CompareSettings, type Ctx, EQ, NE, STEP_BUDGET, compareScalars, proportional } from './scalars.js';
import {
  assignedValue,
  dropApprox,
  expandPm,
  isIntervalLike,
  isScalar,
  matrixOf,
  predValue,
  relationToInterval,
  substituteName,
} from './structure.js';

export type { CompareResult, CompareSettings } from './scalars.js';

export function compareAnswers(gold: Node, pred: Node, settings: CompareSettings): CompareResult {
  const ctx: Ctx = { settings, budget: { steps: STEP_BUDGET } };
  try {
    return compareTop(expandPm(gold), expandPm(pred), ctx);
  } catch (e) {
    if (e instanceof NotEvaluableError) return NE(`not_evaluable: ${e.message}`);
    throw e;
  }
}

// ---------------------------------------------------------------- comparison

/** Whether an inequality pred may stand for an interval gold: the option, or by default off in strict mode. */
const setRelation = (ctx: Ctx): boolean => ctx.settings.allowSetRelationComp ?? !ctx.settings.strict;

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
      if (!setRelation(ctx)) return NE('pred is an inequality, gold is an interval (allowSetRelationComp is off)');
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
  // Spacing never matters; case matters only for single letters (`E` vs `e` may be different choices or constants).
  const x = a.replace(/\s+/g, '');
  const y = b.replace(/\s+/g, '');
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
    const sorted = setSide
      .map((n, i) => [keys[i] as number, n] as const)
      .sort((a, b) => a[0] - b[0])
      .map((x) => x[1]);
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

/** Pairwise matching (quadratic) up to this many items; larger collections of numbers are matched sorted. */
const MAX_PAIRWISE = 64;
const MAX_SORTED = 4096;

function matchUnordered(g0: Node[], p0: Node[], ctx: Ctx, what: string): CompareResult {
  if (g0.length > MAX_PAIRWISE || p0.length > MAX_PAIRWISE) return matchSorted(g0, p0, ctx, what);
  const g = g0.length === p0.length ? g0 : dedupe(g0, ctx);
  const p = g0.length === p0.length ? p0 : dedupe(p0, ctx);
  if (g.length !== p.length) return NE(`${what}: different sizes ${g.length} vs ${p.length}`);
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

/** A large set of numbers: both sides without duplicates, in increasing order, compared item by item. */
function matchSorted(g0: Node[], p0: Node[], ctx: Ctx, what: string): CompareResult {
  if (g0.length > MAX_SORTED || p0.length > MAX_SORTED) return NE(`${what}: too many items`);
  const sorted = (xs: Node[]): Node[] | null => {
    const keyed = xs.map((n) => [realKey(n, ctx), n] as const);
    if (keyed.some(([k]) => Number.isNaN(k))) return null;
    keyed.sort((a, b) => a[0] - b[0]);
    const out: Node[] = [];
    for (const [, n] of keyed) if (out.length === 0 || !compareNodes(out[out.length - 1] as Node, n, ctx).equal) out.push(n);
    return out;
  };
  const g = sorted(g0);
  const p = sorted(p0);
  if (g === null || p === null) return NE(`${what}: too many items that are not numbers`);
  return matchOrdered(g, p, ctx, what);
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
  const flat = (m: Node[][]): Node[] | null =>
    m.every((r) => r.length === 1) ? m.map((r) => r[0] as Node) : m.length === 1 ? (m[0] as Node[]) : null;
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
    if (!setRelation(ctx)) return NE('pred is an inequality, gold is a set (allowSetRelationComp is off)');
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
