/**
 * The operator levels of the parser, loosest first: list (`,` `;` and/or) > relation chain > ratio `:` > union >
 * sum (`+ - \pm`) > product (explicit and implicit, with units and mixed numbers) > unary sign > power, subscript and
 * postfix (`!`, `'`, `%`, degrees). A primary (a number, a word, a group, a command) is `parse-groups.ts` and
 * `parse-commands.ts`.
 */
import type { Node, RelOp } from './ast.js';
import { ParseError, TokenCursor, isSeparatorText, num, show0 } from './parse-cursor.js';
import { FUNCTIONS, REL_CMDS, SEPARATOR_WORDS, STOP_CMDS } from './parse-vocabulary.js';
import { canonicalUnit } from './units.js';

function isAssignment(n: Node): boolean {
  return n.k === 'rel' && n.ops[0] === '=' && (n.items[0]?.k === 'sym' || n.items[0]?.k === 'call');
}

export abstract class OperatorParser extends TokenCursor {
  /** A number, word, group or command. */
  protected abstract parsePrimary(): Node;

  /**
   * `a, b; c and d`. A `;` (or an `and` after a comma list) closes a group; a group of several assignments becomes a
   * tuple (`p=5,q=2;p=7,q=2` -> (5,2), (7,2)); other groups are flattened into one list.
   */
  protected parseList(): Node {
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
  protected parseRelation(): Node {
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
  protected parseColon(): Node {
    const first = this.parseUnion();
    if (!this.isOp(':')) return first;
    const items = [first];
    while (this.isOp(':')) {
      this.next();
      items.push(this.parseUnion());
    }
    return { k: 'colon', items };
  }
  protected parseUnion(): Node {
    const first = this.parseSum();
    if (!this.isCmd('cup')) return first;
    const parts = [first];
    while (this.isCmd('cup')) {
      this.next();
      parts.push(this.parseSum());
    }
    return { k: 'union', parts };
  }
  protected parseSum(): Node {
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
  protected startsFactor(): boolean {
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
  protected parseTerm(): Node {
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
  protected mixedNumber(factors: Node[]): Node | null {
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
  /**
   * A unit after a quantity (`10\text{ cm}^2`, `10 weeks`, `5 yuan`): dropped. A bare word counts as a unit when
   * it has at least two letters and either is separated by a space or has three or more letters (`10cm` stays a product,
   * as MARIO's grader expects).
   */
  protected unitFollows(factors: Node[]): boolean {
    const t = this.peek();
    const last = factors[factors.length - 1];
    if (last === undefined) return false;
    if (t.t === 'text') return !isSeparatorText(t) && !/^[\d.\s]+$/.test(t.v);
    if (t.t !== 'word' || t.v.length < 2 || SEPARATOR_WORDS.has(t.v.toLowerCase()) || FUNCTIONS.has(t.v) || t.v === 'pi') return false;
    if (!(t.sp || t.v.length >= 3)) return false;
    return last.k === 'num' || last.k === 'fn' || last.k === 'div' || last.k === 'pow';
  }
  protected skipUnit(): void {
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
  protected parseUnary(): Node {
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
  protected parseScript(): Node {
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
  protected subscriptName(): string {
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
  protected parsePostfix(): Node {
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
}
