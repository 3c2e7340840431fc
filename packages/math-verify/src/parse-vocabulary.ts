/**
 * The parser's vocabulary (parse.ts): the function and Greek-letter names, relation commands and operators,
 * the commands and words that end or separate an expression, matrix environments and named answers.
 */
import type { Node, RelOp } from './ast.js';

export const FUNCTIONS = new Set([
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'arcsin',
  'arccos',
  'arctan',
  'sinh',
  'cosh',
  'tanh',
  'log',
  'ln',
  'lg',
  'exp',
  'sqrt',
]);
export const TRIG = new Set(['sin', 'cos', 'tan', 'sec', 'csc', 'cot']);
export const GREEK = new Set([
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'varepsilon',
  'zeta',
  'eta',
  'theta',
  'vartheta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'rho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'varphi',
  'chi',
  'psi',
  'omega',
  'Gamma',
  'Delta',
  'Theta',
  'Lambda',
  'Xi',
  'Sigma',
  'Phi',
  'Psi',
  'Omega',
]);
export const REL_CMDS: Record<string, RelOp> = {
  le: '<=',
  leq: '<=',
  leqslant: '<=',
  ge: '>=',
  geq: '>=',
  geqslant: '>=',
  lt: '<',
  gt: '>',
  ne: '!=',
  neq: '!=',
  approx: '~',
  simeq: '~',
  in: 'in',
  equiv: '=',
};
export const REL_OPS: Record<string, RelOp> = { '=': '=', '<': '<', '>': '>', '<=': '<=', '>=': '>=', '!=': '!=' };
/** Single letters that read as a function when followed directly by `(`: f(x), g(2), W(n). */
export const FUNCTION_LETTERS = new Set(['f', 'g', 'h', 'F', 'G', 'H', 'W', 'P', 'Q']);
/** Commands that end an expression (they belong to a looser level). */
export const STOP_CMDS = new Set([
  'cup',
  'cap',
  'setminus',
  'pm',
  'mp',
  'to',
  'rightarrow',
  'implies',
  'iff',
  'Rightarrow',
  'end',
  'quad',
  'qquad',
  'rfloor',
  'rceil',
  'pmod',
  'bmod',
  'mod',
]);
export const SEPARATOR_WORDS = new Set(['and', 'or', 'und', 'et', 'ou', 'y', 'o']);
export const MATRIX_ENVS = new Set([
  'pmatrix',
  'bmatrix',
  'Bmatrix',
  'vmatrix',
  'Vmatrix',
  'matrix',
  'smallmatrix',
  'array',
  'cases',
  'aligned',
  'align',
  'align*',
  'gathered',
  'split',
  'dcases',
]);

export const REALS: Node = {
  k: 'tuple',
  open: '(',
  close: ')',
  items: [
    { k: 'neg', x: { k: 'const', name: 'inf' } },
    { k: 'const', name: 'inf' },
  ],
};

/** Words that name a mathematical object (`all real numbers`, `infinity`); keys are lower case without spaces. */
export const NAMED_ANSWERS: Record<string, Node> = {
  allrealnumbers: REALS,
  realnumbers: REALS,
  infinity: { k: 'const', name: 'inf' },
};

/** Words that say the answer set is empty (`\text{No solution}` is `\emptyset`), read lower-cased without spaces. */
export const EMPTY_SET_WORDS =
  /^(?:(?:there(?:is|are))?no(?:real)?(?:solutions?|roots?|zeros?)(?:exists?|inthereals|forx)?|theemptyset|emptyset)$/;
