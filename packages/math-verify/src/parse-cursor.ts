/**
 * The parser's token cursor and what every grammar level shares: the tokens and the position in them, the nesting
 * bound, the state that changes how tokens read (inside `|...|`, inside a trig function's argument), the units met,
 * and the tests for a list separator, a relation and the end of a term. The grammar levels extend it in turn:
 * `parse-operators.ts` (lists, relations, sums, products, signs, powers), `parse-groups.ts` (brackets, intervals,
 * sets, absolute values, environments) and `parse-commands.ts` (numbers, words, commands and functions).
 */
import type { Node, RelOp } from './ast.js';
import { rFromDecimal } from './numeric.js';
import { REL_CMDS, REL_OPS, SEPARATOR_WORDS } from './parse-vocabulary.js';
import { type Token, tokenize } from './tokenize.js';

export class ParseError extends Error {}

/** Deepest nesting the parser follows. */
const MAX_DEPTH = 120;

/** A number literal as a node (`decimals`: its digits after the point, -1 without a point). */
export function num(text: string): Node {
  const value = rFromDecimal(text);
  if (value === null) throw new ParseError(`bad number ${text}`);
  const dot = text.indexOf('.');
  return { k: 'num', value, text, decimals: dot < 0 ? -1 : text.length - dot - 1 };
}

/** True when `t` is a text group that only says "and"/"or" (a list separator). */
export function isSeparatorText(t: Token): boolean {
  return t.t === 'text' && SEPARATOR_WORDS.has(t.v.trim().toLowerCase());
}

/** A node's short name inside a symbol's name (`\overline{AB}` is the symbol `overline(AB)`). */
export function show0(n: Node): string {
  if (n.k === 'sym') return n.name;
  if (n.k === 'num') return n.text;
  if (n.k === 'text') return n.value;
  if (n.k === 'call') return `${n.name}(${n.args.map(show0).join(',')})`;
  return n.k;
}

export abstract class TokenCursor {
  /** The known units met after quantities (`inch`, `centimeter^2`), in order; unknown words are not recorded. */
  readonly units: string[] = [];
  protected toks: Token[];
  protected pos = 0;
  protected depth = 0;
  protected absDepth = 0;
  protected trigDepth = 0;
  constructor(src: string) {
    this.toks = tokenize(src);
  }
  protected peek(o = 0): Token {
    return this.toks[Math.min(this.pos + o, this.toks.length - 1)] as Token;
  }
  protected next(): Token {
    const t = this.peek();
    if (this.pos < this.toks.length - 1) this.pos++;
    return t;
  }
  protected isOp(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === 'op' && t.v === v;
  }
  protected isCmd(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === 'cmd' && t.v === v;
  }
  protected expectOp(v: string): void {
    if (!this.isOp(v)) throw new ParseError(`expected ${v} but found ${this.peek().v || 'end'}`);
    this.next();
  }
  protected enter(): void {
    if (++this.depth > MAX_DEPTH) throw new ParseError('nesting too deep');
  }
  protected leave(): void {
    this.depth--;
  }
  protected atSeparator(): ',' | ';' | 'and' | null {
    const t = this.peek();
    if (t.t === 'op' && (t.v === ',' || t.v === ';')) return t.v;
    if (t.t === 'word' && SEPARATOR_WORDS.has(t.v.toLowerCase()) && t.v.length > 1) return 'and';
    if (isSeparatorText(t)) return 'and';
    return null;
  }
  protected atListEnd(): boolean {
    const t = this.peek();
    return t.t === 'eof' || (t.t === 'op' && (t.v === ')' || t.v === ']' || t.v === '}' || t.v === '\\}'));
  }
  protected relOp(): RelOp | null {
    const t = this.peek();
    if (t.t === 'op' && t.v in REL_OPS) return REL_OPS[t.v] as RelOp;
    if (t.t === 'cmd' && t.v in REL_CMDS) return REL_CMDS[t.v] as RelOp;
    return null;
  }
  protected atTermEnd(): boolean {
    const t = this.peek();
    return (
      t.t === 'eof' || this.atSeparator() !== null || this.relOp() !== null || (t.t === 'op' && [')', ']', '}', '+', '-'].includes(t.v))
    );
  }
}
