/**
 * The primaries of the parser other than groups: numbers, words (symbols, constants, products of letters, named
 * functions), `\text{}` groups, and commands (`\frac`, `\sqrt`, `\binom`, sums and products, decorations, functions,
 * Greek letters, environments). `Parser` is the concrete parser: this level on top of the others.
 */
import type { Node } from './ast.js';
import { ParseError, num, show0 } from './parse-cursor.js';
import { GroupParser } from './parse-groups.js';
import {
  FUNCTION_LETTERS,
  FUNCTIONS,
  GREEK,
  EMPTY_SET_WORDS,
  NAMED_ANSWERS,
  REALS,
  REL_CMDS,
  STOP_CMDS,
  SEPARATOR_WORDS,
  TRIG,
} from './parse-vocabulary.js';
import type { Token } from './tokenize.js';

export class Parser extends GroupParser {
  /** Parses the whole input as one answer. */
  parseAnswer(): Node {
    const n = this.parseList();
    if (this.peek().t !== 'eof') throw new ParseError(`unexpected ${this.peek().v}`);
    return n;
  }
  /** `{...}` argument of \frac, \sqrt, ...; or a single token (`\frac12`, `\sqrt3`, `\frac a b`). */
  protected parseArg(): Node {
    if (this.isOp('{')) {
      this.next();
      const n = this.parseList();
      this.expectOp('}');
      return n;
    }
    return this.parseScript();
  }
  /** Argument of a named function: `(x)`, `{x}`, or a run of numbers and letters (`\sin 2x`). */
  protected parseFunctionArg(): Node {
    if (this.isOp('(') || this.isOp('{') || this.isOp('[')) return this.parsePostfix();
    const factors: Node[] = [this.parsePostfix()];
    while (this.peek().t === 'num' || (this.peek().t === 'word' && !SEPARATOR_WORDS.has(this.peek().v) && !this.peek().sp))
      factors.push(this.parsePostfix());
    return factors.length === 1 ? (factors[0] as Node) : { k: 'mul', factors };
  }
  protected parseFunction(name: string): Node {
    // `\sin^2 x` and `\log_2 x`.
    let power: Node | null = null;
    let base: Node | null = null;
    for (;;) {
      if (this.isOp('^')) {
        this.next();
        power = this.parseScript();
      } else if (this.isOp('_')) {
        this.next();
        base = this.parseScript();
      } else break;
    }
    const trig = TRIG.has(name);
    if (trig) this.trigDepth++;
    const arg = this.parseFunctionArg();
    if (trig) this.trigDepth--;
    const fname = name === 'lg' ? 'log10' : name;
    let n: Node =
      fname === 'log' ? { k: 'fn', name: 'log', args: base === null ? [arg] : [arg, base] } : { k: 'fn', name: fname, args: [arg] };
    if (power !== null) {
      if (power.k === 'neg' && power.x.k === 'num' && power.x.text === '1' && trig) n = { k: 'fn', name: `arc${fname}`, args: [arg] };
      else n = { k: 'pow', base: n, exp: power };
    }
    return n;
  }
  protected parsePrimary(): Node {
    this.enter();
    try {
      return this.primary();
    } finally {
      this.leave();
    }
  }
  protected primary(): Node {
    const t = this.next();
    switch (t.t) {
      case 'num':
        return num(t.v.endsWith('.') ? t.v.slice(0, -1) : t.v);
      case 'word':
        return this.word(t);
      case 'text':
        return textNode(t.v);
      case 'eof':
        throw new ParseError('unexpected end of answer');
      case 'op':
        return this.opPrimary(t.v);
      case 'cmd':
        return this.command(t.v);
    }
  }
  protected word(t: Token): Node {
    const w = t.v;
    if (FUNCTIONS.has(w)) return this.parseFunction(w);
    if (w === 'pi') return { k: 'const', name: 'pi' };
    if (w === 'infty' || w === 'inf' || w === 'oo') return { k: 'const', name: 'inf' };
    if (w.length === 1) {
      if (FUNCTION_LETTERS.has(w) && this.isOp('(') && !this.peek().sp) {
        this.next();
        const inner = this.parseList();
        this.expectOp(')');
        return { k: 'call', name: w, args: inner.k === 'list' ? inner.items : [inner] };
      }
      if (w === 'e') return { k: 'const', name: 'e' };
      if (w === 'i') return { k: 'const', name: 'i' };
      if (!/[a-zA-Z]/.test(w)) return { k: 'text', value: w };
      return { k: 'sym', name: w };
    }
    if (!/^[a-zA-Z]+$/.test(w)) return { k: 'text', value: w };
    // A run of letters in mathematics is a product of single-letter symbols (`ab`, `xy`).
    this.pos--;
    this.toks[this.pos] = { t: 'word', v: w.slice(1), sp: false };
    return this.word({ t: 'word', v: w[0] as string, sp: t.sp });
  }
  protected command(name: string): Node {
    switch (name) {
      case 'frac':
      case 'over': {
        const a = this.parseArg();
        const b = this.parseArg();
        return { k: 'div', num: a, den: b };
      }
      case 'binom':
      case 'dbinom':
      case 'tbinom':
      case 'choose': {
        const a = this.parseArg();
        const b = this.parseArg();
        return { k: 'fn', name: 'binom', args: [a, b] };
      }
      case 'sqrt': {
        let index: Node | null = null;
        if (this.isOp('[')) {
          this.next();
          index = this.parseSum();
          this.expectOp(']');
        }
        const x = this.parseArg();
        return { k: 'fn', name: 'sqrt', args: index === null ? [x] : [x, index] };
      }
      case 'pi':
        return { k: 'const', name: 'pi' };
      case 'infty':
      case 'infin':
        return { k: 'const', name: 'inf' };
      case 'imath':
      case 'jmath':
        return { k: 'const', name: 'i' };
      case 'emptyset':
      case 'varnothing':
        return { k: 'set', items: [] };
      case 'e':
        return { k: 'const', name: 'e' };
      case 'begin':
        return this.parseEnvironment();
      case 'lfloor':
      case 'lceil': {
        const inner = this.parseSum();
        const close = this.next();
        if (close.t !== 'cmd' || (close.v !== 'rfloor' && close.v !== 'rceil')) throw new ParseError('unclosed floor/ceil');
        return { k: 'fn', name: name === 'lfloor' ? 'floor' : 'ceil', args: [inner] };
      }
      case 'sum':
      case 'prod':
        return this.bigOp(name);
      case 'mathbb': {
        const inner = this.parseArg();
        // \mathbb{R}: all real numbers, the interval (-oo, oo).
        if (inner.k === 'sym' && inner.name === 'R') return REALS;
        return { k: 'sym', name: `mathbb(${show0(inner)})` };
      }
      case 'overline':
      case 'vec':
      case 'hat':
      case 'bar':
      case 'tilde':
      case 'widehat':
      case 'overrightarrow':
      case 'mathcal':
      case 'boldsymbol':
      case 'angle': {
        const inner = name === 'angle' ? this.parsePostfix() : this.parseArg();
        return { k: 'sym', name: `${name}(${show0(inner)})` };
      }
      case 'dots':
      case 'ldots':
      case 'cdots':
        return { k: 'text', value: '...' };
      case 'boxed':
      case 'fbox':
        return this.parseArg();
      default:
        if (FUNCTIONS.has(name) || name === 'arcsin' || name === 'arccos' || name === 'arctan') return this.parseFunction(name);
        if (GREEK.has(name)) return { k: 'sym', name };
        if (name in REL_CMDS || STOP_CMDS.has(name)) throw new ParseError(`unexpected \\${name}`);
        // Unknown commands (`\zzz`, macros) are opaque symbols.
        return { k: 'sym', name: `\\${name}` };
    }
  }
  protected bigOp(name: 'sum' | 'prod'): Node {
    let index = '';
    let lo: Node | null = null;
    let hi: Node | null = null;
    for (let k = 0; k < 2; k++) {
      if (this.isOp('_')) {
        this.next();
        const sub = this.parseScript();
        const idx = sub.k === 'rel' && sub.ops[0] === '=' ? sub.items[0] : undefined;
        if (idx !== undefined && (idx.k === 'sym' || (idx.k === 'const' && (idx.name === 'i' || idx.name === 'e')))) {
          // `\sum_{i=1}^n`: here i is an index, not the imaginary unit.
          index = idx.name;
          lo = (sub as Extract<Node, { k: 'rel' }>).items[1] as Node;
        } else throw new ParseError('sum without index range');
      } else if (this.isOp('^')) {
        this.next();
        hi = this.parseScript();
      }
    }
    if (lo === null || hi === null) throw new ParseError('sum without bounds');
    const body = this.parseTerm();
    return { k: 'bigop', op: name, index, lo, hi, body };
  }
}

/** A `\text{...}` group in a math position: a number, a single letter (`\mathrm{e}`), a choice `(C)`, or words. */
export function textNode(raw: string): Node {
  const v = raw.trim();
  if (/^\d+(?:\.\d+)?$/.test(v)) return num(v);
  if (v === 'e') return { k: 'const', name: 'e' };
  const key = v.toLowerCase().replace(/[\s.]+/g, '');
  const named = NAMED_ANSWERS[key];
  if (named) return named;
  if (EMPTY_SET_WORDS.test(key)) return { k: 'set', items: [] };
  const choice = /^\(([A-Za-z])\)$/.exec(v);
  if (choice) return { k: 'text', value: choice[1] as string };
  return { k: 'text', value: v };
}
