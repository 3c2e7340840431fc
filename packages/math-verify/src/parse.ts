/**
 * Recursive-descent parser from a normalised LaTeX answer to a `Node`.
 * Precedence, loosest first: list (`,` `;` and/or) > relation chain > union > sum (`+ - \pm`)
 * > product (explicit and implicit) > unary sign > power/postfix > primary.
 * Depth is bounded so that 10,000 nested braces fail fast instead of overflowing the stack.
 * One class per grammar level, each in its own file, each extending the one below: `parse-cursor.ts` (tokens,
 * position, nesting), `parse-operators.ts` (the precedence levels), `parse-groups.ts` (brackets, sets, intervals,
 * environments) and `parse-commands.ts` (numbers, words, commands: the concrete `Parser`).
 */
import type { Node } from './ast.js';
import { Parser } from './parse-commands.js';

export { textNode } from './parse-commands.js';

/**
 * Parses one normalised answer, with the known units it wrote after its quantities; throws
 * `ParseError` (or `TokenizeError`) on malformed input.
 */
export function parseWithUnits(src: string): { node: Node; units: string[] } {
  const p = new Parser(src);
  const node = p.parseAnswer();
  return { node, units: p.units };
}
