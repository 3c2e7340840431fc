/**
 * The parsed form of one answer. Scalar nodes (numbers, symbols, arithmetic) evaluate to a
 * number; structural nodes (lists, sets, intervals, relations, matrices) are compared part by part.
 */
import type { Rational } from './numeric.js';

export type RelOp = '=' | '<' | '<=' | '>' | '>=' | '!=' | 'in' | '~';

export type Node =
  /** A numeric literal. `decimals` is the number of digits after the point (-1: integer literal). */
  | { k: 'num'; value: Rational; text: string; decimals: number }
  /** A free variable such as `x`, `x_1`, `f'`. */
  | { k: 'sym'; name: string }
  | { k: 'const'; name: 'pi' | 'e' | 'i' | 'inf' }
  | { k: 'add'; terms: Node[] }
  | { k: 'neg'; x: Node }
  | { k: 'mul'; factors: Node[] }
  | { k: 'div'; num: Node; den: Node }
  | { k: 'pow'; base: Node; exp: Node }
  /** Known functions: sin, cos, ..., sqrt (args [x] or [x, n]), log (args [x] or [x, base]), abs, floor, ceil, fact. */
  | { k: 'fn'; name: string; args: Node[] }
  /** Application of an unknown function such as `f(x)`; evaluated as a fixed pseudo-random function of its name. */
  | { k: 'call'; name: string; args: Node[] }
  /** `a \pm b` (a null for unary `\pm b`). Expands to two alternatives. */
  | { k: 'pm'; a: Node | null; b: Node; sign: 1 | -1 }
  /** Words that are not mathematics (`\text{Evelyn}`, `odd`). */
  | { k: 'text'; value: string }
  /** `( ... )` or `[ ... ]` with two or more comma-separated items; also half-open `[a, b)`. */
  | { k: 'tuple'; open: '(' | '['; close: ')' | ']'; items: Node[] }
  | { k: 'set'; items: Node[] }
  /** A bare list `1, 2, 3` or `1 and 2`. */
  | { k: 'list'; items: Node[] }
  | { k: 'union'; parts: Node[] }
  /** A relation chain `a op0 b op1 c ...` (items.length === ops.length + 1). */
  | { k: 'rel'; ops: RelOp[]; items: Node[] }
  | { k: 'matrix'; rows: Node[][] }
  /** `\sum` / `\prod` over an integer range. */
  | { k: 'bigop'; op: 'sum' | 'prod'; index: string; lo: Node; hi: Node; body: Node }
  /** A clock time `h:mm(:ss)` or a ratio `a:b`, kept as its parts. */
  | { k: 'colon'; items: Node[] };

/** Readable one-line form of a node, used in `VerifyResult.gold/pred` so users can see what was compared. */
export function show(n: Node): string {
  switch (n.k) {
    case 'num':
      return n.text;
    case 'sym':
      return n.name;
    case 'const':
      return n.name === 'inf' ? 'oo' : n.name === 'pi' ? 'pi' : n.name;
    case 'add':
      return n.terms.map((t, i) => (i === 0 ? show(t) : t.k === 'neg' ? ` - ${show(t.x)}` : ` + ${show(t)}`)).join('');
    case 'neg':
      return `-${wrap(n.x)}`;
    case 'mul':
      return n.factors.map(wrap).join('*');
    case 'div':
      return `${wrap(n.num)}/${wrap(n.den)}`;
    case 'pow':
      return `${wrap(n.base)}^${wrap(n.exp)}`;
    case 'fn':
    case 'call':
      return `${n.name}(${n.args.map(show).join(', ')})`;
    case 'pm':
      return `${n.a ? show(n.a) + ' ' : ''}${n.sign > 0 ? '±' : '∓'} ${wrap(n.b)}`;
    case 'text':
      return JSON.stringify(n.value);
    case 'tuple':
      return `${n.open}${n.items.map(show).join(', ')}${n.close}`;
    case 'set':
      return `{${n.items.map(show).join(', ')}}`;
    case 'list':
      return n.items.map(show).join(', ');
    case 'union':
      return n.parts.map(show).join(' ∪ ');
    case 'rel':
      return n.items.map((it, i) => (i === 0 ? show(it) : ` ${n.ops[i - 1]} ${show(it)}`)).join('');
    case 'matrix':
      return `[${n.rows.map((r) => `[${r.map(show).join(', ')}]`).join(', ')}]`;
    case 'bigop':
      return `${n.op}(${show(n.body)}, ${n.index}=${show(n.lo)}..${show(n.hi)})`;
    case 'colon':
      return n.items.map(show).join(':');
  }
}

function wrap(n: Node): string {
  const s = show(n);
  return n.k === 'add' || n.k === 'neg' || n.k === 'div' || n.k === 'pm' || n.k === 'mul' ? `(${s})` : s;
}

/**
 * Rebuild the arithmetic skeleton of `n` (add, mul, neg, div, pow, fn, call) with `leaf` applied
 * to every other node: the one walk behind variable renaming and index substitution.
 */
export function mapArithmeticLeaves(n: Node, leaf: (x: Node) => Node): Node {
  const go = (x: Node): Node => {
    switch (x.k) {
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
        return leaf(x);
    }
  };
  return go(n);
}
