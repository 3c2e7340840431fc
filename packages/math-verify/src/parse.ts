/**
 * Recursive-descent parser from a normalised LaTeX answer to a `Node`.
 * Precedence, loosest first: list (`,` `;` and/or) > relation chain > union > sum (`+ - \pm`)
 * > product (explicit and implicit) > unary sign > power/postfix > primary.
 * Depth is bounded so that 10,000 nested braces fail fast instead of overflowing the stack.
 */
import type { Node, RelOp } from './ast.js';
import { rFromDecimal } from './numeric.js';
import { tokenize, type Token } from './tokenize.js';
import { canonicalUnit } from './units.js';
import {
  FUNCTIONS,
  TRIG,
  GREEK,
  REL_CMDS,
  REL_OPS,
  FUNCTION_LETTERS,
  STOP_CMDS,
  SEPARATOR_WORDS,
  MATRIX_ENVS,
  REALS,
  NAMED_ANSWERS,
} from './parse-vocabulary.js';

class ParseError extends Error {}

/** Deepest nesting the parser follows. */
const MAX_DEPTH = 120;

function isAssignment(n: Node): boolean {
  return n.k === 'rel' && n.ops[0] === '=' && (n.items[0]?.k === 'sym' || n.items[0]?.k === 'call');
}

function num(text: string): Node {
  const value = rFromDecimal(text);
  if (value === null) throw new ParseError(`bad number ${text}`);
  const dot = text.indexOf('.');
  return { k: 'num', value, text, decimals: dot < 0 ? -1 : text.length - dot - 1 };
}

/** True when `t` is a text group that only says "and"/"or" (a list separator). */
function isSeparatorText(t: Token): boolean {
  return t.t === 'text' && SEPARATOR_WORDS.has(t.v.trim().toLowerCase());
}

class Parser {
  /** The known units met after quantities (`inch`, `centimeter^2`), in order; unknown words are not recorded. */
  readonly units: string[] = [];
  private toks: Token[];
  private pos = 0;
  private depth = 0;
  private absDepth = 0;
  private trigDepth = 0;

  constructor(src: string) {
    this.toks = tokenize(src);
  }

  private peek(o = 0): Token {
    return this.toks[Math.min(this.pos + o, this.toks.length - 1)] as Token;
  }
  private next(): Token {
    const t = this.peek();
    if (this.pos < this.toks.length - 1) this.pos++;
    return t;
  }
  private isOp(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === 'op' && t.v === v;
  }
  private isCmd(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === 'cmd' && t.v === v;
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) throw new ParseError(`expected ${v} but found ${this.peek().v || 'end'}`);
    this.next();
  }
  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new ParseError('nesting too deep');
  }
  private leave(): void {
    this.depth--;
  }

  /** Parses the whole input as one answer. */
  parseAnswer(): Node {
    const n = this.parseList();
    if (this.peek().t !== 'eof') throw new ParseError(`unexpected ${this.peek().v}`);
    return n;
  }

  private atSeparator(): ',' | ';' | 'and' | null {
    const t = this.peek();
    if (t.t === 'op' && (t.v === ',' || t.v === ';')) return t.v;
    if (t.t === 'word' && SEPARATOR_WORDS.has(t.v.toLowerCase()) && t.v.length > 1) return 'and';
    if (isSeparatorText(t)) return 'and';
    return null;
  }

  /**
   * `a, b; c and d`. A `;` (or an `and` after a comma list) closes a group; a group of several assignments becomes a
   * tuple (`p=5,q=2;p=7,q=2` -> (5,2), (7,2)); other groups are flattened into one list.
   */
  private parseList(): Node {
    const groups: Node[][] = [[]];
    for (;;) {
      const cur = groups[groups.length - 1] as Node[];
      // Tolerate empty items (`1, , 2` or a trailing `and`).
      if (this.atSeparator() === null && !this.atListEnd()) cur.push(this.parseRelation());
      const sep = this.atSeparator();
      if (sep === null) break;
      this.next();
      // `, and` is one separator.
      while (this.atSeparator() === 'and') this.next();
      if (sep === ';' || (sep === 'and' && cur.length > 1)) groups.push([]);
    }
    const items = groups.flatMap((g): Node[] =>
      groups.length > 1 && g.length > 1 && g.every(isAssignment) ? [{ k: 'tuple', open: '(', close: ')', items: g }] : g,
    );
    if (items.length === 0) throw new ParseError('empty answer');
    return items.length === 1 ? (items[0] as Node) : { k: 'list', items };
  }

  private atListEnd(): boolean {
    const t = this.peek();
    return t.t === 'eof' || (t.t === 'op' && (t.v === ')' || t.v === ']' || t.v === '}' || t.v === '\\}'));
  }

  private relOp(): RelOp | null {
    const t = this.peek();
    if (t.t === 'op' && t.v in REL_OPS) return REL_OPS[t.v] as RelOp;
    if (t.t === 'cmd' && t.v in REL_CMDS) return REL_CMDS[t.v] as RelOp;
    return null;
  }

  private parseRelation(): Node {
    const first = this.parseColon();
    const ops: RelOp[] = [];
    const items: Node[] = [first];
    for (let op = this.relOp(); op !== null; op = this.relOp()) {
      this.next();
      ops.push(op);
      items.push(this.parseColon());
    }
    return ops.length === 0 ? first : { k: 'rel', ops, items };
  }

  /** `7:32`, `20:34:00`, `A:B` (ratios and clock times keep their parts). */
  private parseColon(): Node {
    const first = this.parseUnion();
    if (!this.isOp(':')) return first;
    const items = [first];
    while (this.isOp(':')) {
      this.next();
      items.push(this.parseUnion());
    }
    return { k: 'colon', items };
  }

  private parseUnion(): Node {
    const first = this.parseSum();
    if (!this.isCmd('cup')) return first;
    const parts = [first];
    while (this.isCmd('cup')) {
      this.next();
      parts.push(this.parseSum());
    }
    return { k: 'union', parts };
  }

  private parseSum(): Node {
    this.enter();
    let acc: Node | null = null;
    const terms: Node[] = [];
    const flush = (): Node => {
      if (terms.length === 0) return acc as Node;
      const sum: Node =
        terms.length === 1 && acc === null ? (terms[0] as Node) : { k: 'add', terms: acc === null ? terms.slice() : [acc, ...terms] };
      terms.length = 0;
      return sum;
    };
    for (let first = true; ; first = false) {
      const t = this.peek();
      if (t.t === 'cmd' && (t.v === 'pm' || t.v === 'mp')) {
        this.next();
        const left: Node | null = first ? null : flush();
        const b = this.parseTerm();
        acc = { k: 'pm', a: left, b, sign: t.v === 'pm' ? 1 : -1 };
        continue;
      }
      if (t.t === 'op' && (t.v === '+' || t.v === '-')) {
        this.next();
        const term = this.parseTerm();
        terms.push(t.v === '-' ? { k: 'neg', x: term } : term);
        continue;
      }
      if (!first) break;
      terms.push(this.parseTerm());
    }
    this.leave();
    return flush();
  }

  /** True when the next token can start another factor of an implicit product. */
  private startsFactor(): boolean {
    const t = this.peek();
    switch (t.t) {
      case 'num':
        return true;
      case 'word':
        return !SEPARATOR_WORDS.has(t.v.toLowerCase()) || t.v.length === 1;
      case 'text':
        return !isSeparatorText(t);
      case 'cmd':
        return !(t.v in REL_CMDS) && !STOP_CMDS.has(t.v) && !['cdot', 'times', 'div', 'degree'].includes(t.v);
      case 'op':
        if (t.v === '|') return this.absDepth === 0;
        return t.v === '(' || t.v === '{' || t.v === '\\{' || (t.v === '[' && false);
      default:
        return false;
    }
  }

  private parseTerm(): Node {
    this.enter();
    const factors: Node[] = [this.parseUnary()];
    let result: Node | null = null;
    const product = (): Node => (factors.length === 1 ? (factors[0] as Node) : { k: 'mul', factors: factors.slice() });
    for (;;) {
      const t = this.peek();
      if ((t.t === 'op' && t.v === '*') || (t.t === 'cmd' && (t.v === 'cdot' || t.v === 'times'))) {
        this.next();
        factors.push(this.parseUnary());
        continue;
      }
      if ((t.t === 'op' && t.v === '/') || (t.t === 'cmd' && t.v === 'div')) {
        this.next();
        const den = this.parseUnary();
        const numer = product();
        factors.length = 0;
        factors.push({ k: 'div', num: numer, den });
        continue;
      }
      if (this.unitFollows(factors)) {
        this.skipUnit();
        continue;
      }
      if (this.startsFactor()) {
        const mixed = this.mixedNumber(factors);
        if (mixed !== null) {
          factors[factors.length - 1] = mixed;
          continue;
        }
        factors.push(this.parsePostfix());
        continue;
      }
      break;
    }
    result = product();
    this.leave();
    return result;
  }

  /** `1\frac12`, `2 1/2`: an integer literal directly followed by a fraction of integer literals. */
  private mixedNumber(factors: Node[]): Node | null {
    const last = factors[factors.length - 1];
    if (factors.length !== 1 || last === undefined || last.k !== 'num' || last.decimals >= 0) return null;
    const save = this.pos;
    let frac: Node | null = null;
    try {
      if (this.isCmd('frac')) {
        const f = this.parsePostfix();
        if (f.k === 'div' && f.num.k === 'num' && f.den.k === 'num' && f.num.decimals < 0 && f.den.decimals < 0) frac = f;
      } else if (this.peek().t === 'num' && this.peek().sp && this.isOp('/', 1) && this.peek(2).t === 'num') {
        const a = num(this.next().v);
        this.next();
        const b = num(this.next().v);
        if (a.k === 'num' && b.k === 'num' && a.decimals < 0 && b.decimals < 0 && this.atTermEnd()) frac = { k: 'div', num: a, den: b };
      }
    } catch {
      frac = null;
    }
    if (frac === null) {
      this.pos = save;
      return null;
    }
    return { k: 'add', terms: [last, frac] };
  }

  private atTermEnd(): boolean {
    const t = this.peek();
    return (
      t.t === 'eof' || this.atSeparator() !== null || this.relOp() !== null || (t.t === 'op' && [')', ']', '}', '+', '-'].includes(t.v))
    );
  }

  /**
   * A unit after a quantity (`10\text{ cm}^2`, `10 weeks`, `5 yuan`): dropped. A bare word counts as a unit when
   * it has at least two letters and either is separated by a space or has three or more letters (`10cm` stays a product,
   * as MARIO's grader expects).
   */
  private unitFollows(factors: Node[]): boolean {
    const t = this.peek();
    const last = factors[factors.length - 1];
    if (last === undefined) return false;
    if (t.t === 'text') return !isSeparatorText(t) && !/^[\d.\s]+$/.test(t.v);
    if (t.t !== 'word' || t.v.length < 2 || SEPARATOR_WORDS.has(t.v.toLowerCase()) || FUNCTIONS.has(t.v) || t.v === 'pi') return false;
    if (!(t.sp || t.v.length >= 3)) return false;
    return last.k === 'num' || last.k === 'fn' || last.k === 'div' || last.k === 'pow';
  }

  private skipUnit(): void {
    const parts: string[] = [this.next().v];
    const unitWord = (): boolean =>
      (this.peek().t === 'word' && !SEPARATOR_WORDS.has(this.peek().v.toLowerCase())) ||
      (this.peek().t === 'text' && !isSeparatorText(this.peek()));
    let power: string | null = null;
    for (;;) {
      while (unitWord()) parts.push(this.next().v);
      if (this.isOp('^')) {
        this.next();
        let p = '';
        if (this.isOp('{')) {
          this.next();
          while (!this.isOp('}') && this.peek().t !== 'eof') p += this.next().v;
          this.next();
        } else p = this.next().v;
        power = p;
      }
      // A compound unit: `km / h`, `\text{m}/\text{s}^2`.
      const t1 = this.peek(1);
      if (this.isOp('/') && (t1.t === 'word' || (t1.t === 'text' && !isSeparatorText(t1)))) {
        this.next();
        parts.push('/');
        continue;
      }
      break;
    }
    const unit = canonicalUnit(parts, power);
    if (unit !== null) this.units.push(unit);
  }

  private parseUnary(): Node {
    const t = this.peek();
    if (t.t === 'op' && t.v === '-') {
      this.next();
      this.enter();
      const x = this.parseUnary();
      this.leave();
      return { k: 'neg', x };
    }
    if (t.t === 'op' && t.v === '+') {
      this.next();
      return this.parseUnary();
    }
    if (t.t === 'cmd' && (t.v === 'pm' || t.v === 'mp')) {
      this.next();
      return { k: 'pm', a: null, b: this.parseUnary(), sign: t.v === 'pm' ? 1 : -1 };
    }
    return this.parsePostfix();
  }

  /** A script argument: `{...}`, one digit of a number, one letter, or one command. */
  private parseScript(): Node {
    const t = this.peek();
    if (t.t === 'op' && t.v === '{') {
      this.next();
      const n = this.parseList();
      this.expectOp('}');
      return n;
    }
    if (t.t === 'num' && t.v.length > 1 && !t.v.startsWith('.')) {
      // `x^23` is x^2 * 3 in TeX: split the literal.
      this.toks[this.pos] = { t: 'num', v: t.v.slice(1), sp: false };
      return num(t.v[0] as string);
    }
    if (t.t === 'word' && t.v.length > 1) {
      this.toks[this.pos] = { t: 'word', v: t.v.slice(1), sp: false };
      return { k: 'sym', name: t.v[0] as string };
    }
    if (t.t === 'op' && t.v === '-') {
      this.next();
      return { k: 'neg', x: this.parseScript() };
    }
    return this.parsePrimary();
  }

  /** Raw text of a subscript, for names such as `x_{1}` and `a_{37}`. */
  private subscriptName(): string {
    const t = this.peek();
    if (t.t === 'op' && t.v === '{') {
      this.next();
      let s = '';
      let depth = 0;
      while (!(this.isOp('}') && depth === 0)) {
        const u = this.next();
        if (u.t === 'eof') throw new ParseError('unclosed subscript');
        if (u.t === 'op' && u.v === '{') depth++;
        if (u.t === 'op' && u.v === '}') depth--;
        s += u.t === 'cmd' ? `\\${u.v}` : u.v;
      }
      this.next();
      return s;
    }
    const u = this.next();
    if (u.t === 'num' || u.t === 'word') {
      if (u.v.length > 1 && u.t === 'word') {
        this.pos--;
        this.toks[this.pos] = { t: 'word', v: u.v.slice(1), sp: false };
        return u.v[0] as string;
      }
      if (u.v.length > 1 && u.t === 'num') {
        this.pos--;
        this.toks[this.pos] = { t: 'num', v: u.v.slice(1), sp: false };
        return u.v[0] as string;
      }
      return u.v;
    }
    if (u.t === 'cmd') return `\\${u.v}`;
    throw new ParseError('bad subscript');
  }

  private parsePostfix(): Node {
    this.enter();
    let base = this.parsePrimary();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && t.v === '^') {
        this.next();
        base = { k: 'pow', base, exp: this.parseScript() };
      } else if (t.t === 'op' && t.v === '_') {
        this.next();
        const sub = this.subscriptName();
        if (base.k === 'sym') base = { k: 'sym', name: `${base.name}_${sub}` };
        else if (base.k === 'num' && /^\d+$/.test(sub) && base.decimals < 0)
          base = { k: 'call', name: `base${sub}`, args: [{ k: 'text', value: base.text }] };
        else if (base.k === 'call' || base.k === 'text') base = { k: 'sym', name: `${show0(base)}_${sub}` };
        // Other subscripts (decorations) are ignored.
      } else if (t.t === 'op' && t.v === '!' && !this.isOp('=', 1)) {
        this.next();
        base = { k: 'fn', name: 'fact', args: [base] };
      } else if (t.t === 'op' && t.v === "'") {
        this.next();
        if (base.k === 'sym') base = { k: 'sym', name: base.name + "'" };
        else base = { k: 'fn', name: 'prime', args: [base] };
      } else if (t.t === 'op' && t.v === '%') {
        this.next();
        base = { k: 'fn', name: 'percent', args: [base] };
      } else if (t.t === 'cmd' && t.v === 'degree') {
        this.next();
        base = { k: 'fn', name: this.trigDepth > 0 ? 'deg' : 'degnote', args: [base] };
        if (this.trigDepth === 0) this.units.push('degree');
      } else break;
    }
    this.leave();
    return base;
  }

  /** `{...}` argument of \frac, \sqrt, ...; or a single token (`\frac12`, `\sqrt3`, `\frac a b`). */
  private parseArg(): Node {
    if (this.isOp('{')) {
      this.next();
      const n = this.parseList();
      this.expectOp('}');
      return n;
    }
    return this.parseScript();
  }

  /** Argument of a named function: `(x)`, `{x}`, or a run of numbers and letters (`\sin 2x`). */
  private parseFunctionArg(): Node {
    if (this.isOp('(') || this.isOp('{') || this.isOp('[')) return this.parsePostfix();
    const factors: Node[] = [this.parsePostfix()];
    while (this.peek().t === 'num' || (this.peek().t === 'word' && !SEPARATOR_WORDS.has(this.peek().v) && !this.peek().sp))
      factors.push(this.parsePostfix());
    return factors.length === 1 ? (factors[0] as Node) : { k: 'mul', factors };
  }

  private parseFunction(name: string): Node {
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

  private parseEnvironment(): Node {
    // \begin{env}
    this.expectOp('{');
    let env = '';
    while (!this.isOp('}')) {
      const t = this.next();
      if (t.t === 'eof') throw new ParseError('bad \\begin');
      env += t.v;
    }
    this.next();
    if (!MATRIX_ENVS.has(env)) throw new ParseError(`unsupported environment ${env}`);
    if (env === 'array' && this.isOp('{')) {
      while (!this.isOp('}') && this.peek().t !== 'eof') this.next();
      this.next();
    }
    const rows: Node[][] = [];
    let row: Node[] = [];
    for (;;) {
      if (this.isCmd('end')) {
        this.next();
        this.expectOp('{');
        while (!this.isOp('}') && this.peek().t !== 'eof') this.next();
        this.expectOp('}');
        break;
      }
      if (this.peek().t === 'eof') throw new ParseError(`unclosed ${env}`);
      if (this.isOp('&')) {
        this.next();
        continue;
      }
      if (this.isOp('\\\\')) {
        this.next();
        if (row.length > 0) rows.push(row);
        row = [];
        continue;
      }
      row.push(this.parseRelation());
    }
    if (row.length > 0) rows.push(row);
    if (env === 'cases' || env === 'dcases' || env.startsWith('align') || env === 'gathered' || env === 'split') {
      const items = rows.map((r) => (r.length === 1 ? (r[0] as Node) : { k: 'list' as const, items: r }));
      return items.length === 1 ? (items[0] as Node) : { k: 'list', items };
    }
    if (env === 'vmatrix' || env === 'Vmatrix') return { k: 'fn', name: 'det', args: [{ k: 'matrix', rows }] };
    return { k: 'matrix', rows };
  }

  /** A bracketed group: `( ... )`, `[ ... ]`, with mismatched ends for half-open intervals. */
  private parseBracket(open: '(' | '['): Node {
    const save = this.absDepth;
    this.absDepth = 0;
    const inner = this.parseList();
    this.absDepth = save;
    const t = this.next();
    if (t.t !== 'op' || (t.v !== ')' && t.v !== ']')) throw new ParseError(`expected ) or ] but found ${t.v || 'end'}`);
    const close = t.v as ')' | ']';
    if (inner.k === 'list' || (inner.k === 'tuple' && inner.open === '(' && false))
      return { k: 'tuple', open, close, items: inner.items as Node[] };
    if (open === '(' && close === ')') return inner;
    if (open === '[' && close === ']') return inner;
    throw new ParseError('mismatched brackets around a single item');
  }

  private parsePrimary(): Node {
    this.enter();
    try {
      return this.primary();
    } finally {
      this.leave();
    }
  }

  private primary(): Node {
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

  private word(t: Token): Node {
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

  private opPrimary(v: string): Node {
    switch (v) {
      case '(':
      case '[':
        return this.parseBracket(v);
      case '{': {
        const inner = this.parseList();
        this.expectOp('}');
        return inner.k === 'list' ? { k: 'set', items: inner.items } : inner;
      }
      case '\\{': {
        if (this.isOp('\\}')) {
          this.next();
          return { k: 'set', items: [] };
        }
        const inner = this.parseList();
        this.expectOp('\\}');
        return { k: 'set', items: inner.k === 'list' ? inner.items : [inner] };
      }
      case '|': {
        this.absDepth++;
        const inner = this.parseSum();
        this.absDepth--;
        this.expectOp('|');
        return { k: 'fn', name: 'abs', args: [inner] };
      }
      case '\\|': {
        const inner = this.parseSum();
        this.expectOp('\\|');
        return { k: 'fn', name: 'abs', args: [inner] };
      }
      default:
        throw new ParseError(`unexpected ${v}`);
    }
  }

  private command(name: string): Node {
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

  private bigOp(name: 'sum' | 'prod'): Node {
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

function show0(n: Node): string {
  if (n.k === 'sym') return n.name;
  if (n.k === 'num') return n.text;
  if (n.k === 'text') return n.value;
  if (n.k === 'call') return `${n.name}(${n.args.map(show0).join(',')})`;
  return n.k;
}

/** A `\text{...}` group in a math position: a number, a single letter (`\mathrm{e}`), a choice `(C)`, or words. */
export function textNode(raw: string): Node {
  const v = raw.trim();
  if (/^\d+(?:\.\d+)?$/.test(v)) return num(v);
  if (v === 'e') return { k: 'const', name: 'e' };
  const named = NAMED_ANSWERS[v.toLowerCase().replace(/\s+/g, '')];
  if (named) return named;
  const choice = /^\(([A-Za-z])\)$/.exec(v);
  if (choice) return { k: 'text', value: choice[1] as string };
  return { k: 'text', value: v };
}

/**
 * Parses one normalised answer, with the known units it wrote after its quantities; throws
 * `ParseError` (or `TokenizeError`) on malformed input.
 */
export function parseWithUnits(src: string): { node: Node; units: string[] } {
  const p = new Parser(src);
  const node = p.parseAnswer();
  return { node, units: p.units };
}
