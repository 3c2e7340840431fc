/**
 * The bracketed groups of the parser: `( ... )` and `[ ... ]` (a value, a tuple, or an interval with mismatched
 * ends), `{...}` and `\{...\}` (sets), `|...|` and `\|...\|` (absolute values), and `\begin{...}` environments
 * (matrices, determinants, cases and aligned rows).
 */
import type { Node } from './ast.js';
import { ParseError } from './parse-cursor.js';
import { OperatorParser } from './parse-operators.js';
import { MATRIX_ENVS } from './parse-vocabulary.js';

export abstract class GroupParser extends OperatorParser {
  protected parseEnvironment(): Node {
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
  protected parseBracket(open: '(' | '['): Node {
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
  protected opPrimary(v: string): Node {
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
}
