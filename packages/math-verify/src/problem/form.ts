/**
 * The form a problem asks the answer in ("Express your answer as a common fraction", "in simplest radical form",
 * "in terms of $\pi$", "as a decimal", "in interval notation"), for the `strictForm` option: an equal value in
 * another form is then refused, as strict graders (and hendrycks MATH's human markers) do.
 */
import type { Node } from '../ast.js';

/** What the problem asks: no decimal (`exact`: fraction, mixed number, radical, pi), a decimal, an interval. */
export interface AskedForm {
  /** The words asked (`a common fraction`), for the reason. */
  exact: string | null;
  decimal: boolean;
  interval: boolean;
}

const EXACT: [RegExp, string][] = [
  [
    /\bcommon\s+fraction\b|\bas\s+an?\s+(?:(?:reduced|simplified|improper|proper)\s+)?fraction\b|\bfraction\s+in\s+(?:simplest|lowest)\s+(?:form|terms)\b/i,
    'a common fraction',
  ],
  [/\bmixed\s+number\b/i, 'a mixed number'],
  [/\b(?:simplest\s+)?radical\s+form\b/i, 'simplest radical form'],
  [/\bin\s+terms\s+of\s*\$?\s*\\pi\b/i, 'terms of pi'],
];
const DECIMAL = /\bas\s+a\s+decimal\b|\bin\s+decimal\s+form\b|\bdecimal\s+(?:form|answer)\b|\bas\s+a\s+decimal\s+number\b/i;
const INTERVAL = /\binterval\s+notation\b/i;

/** The form `problem` asks for, or null when it asks for none (or asks for both a decimal and an exact form). */
export function askedForm(problem: string): AskedForm | null {
  const exact = EXACT.find(([re]) => re.test(problem))?.[1] ?? null;
  const decimal = exact === null && DECIMAL.test(problem);
  const interval = INTERVAL.test(problem);
  return exact === null && !decimal && !interval ? null : { exact, decimal, interval };
}

/** Whether some node of `n` satisfies `test`. */
function some(n: Node, test: (x: Node) => boolean): boolean {
  if (test(n)) return true;
  for (const v of Object.values(n)) {
    if (Array.isArray(v)) {
      for (const y of v)
        for (const z of Array.isArray(y) ? y : [y])
          if (typeof z === 'object' && z !== null && 'k' in z && some(z as Node, test)) return true;
    } else if (typeof v === 'object' && v !== null && 'k' in v && some(v as Node, test)) return true;
  }
  return false;
}

const isDecimal = (x: Node): boolean => x.k === 'num' && x.decimals > 0;
const notDecimalForm = (x: Node): boolean =>
  x.k === 'div' || (x.k === 'fn' && x.name === 'sqrt') || (x.k === 'const' && x.name === 'pi') || (x.k === 'pow' && x.exp.k !== 'num');

/** Why `answer` is not in the form asked (`form: the problem asks for a common fraction, the answer has a decimal`), or null. */
export function formConflict(asked: AskedForm, answer: Node): string | null {
  if (asked.exact !== null && some(answer, isDecimal)) return `form: the problem asks for ${asked.exact}, the answer has a decimal`;
  if (asked.decimal && some(answer, notDecimalForm)) return 'form: the problem asks for a decimal, the answer is not one';
  if (asked.interval && some(answer, (x) => x.k === 'rel'))
    return 'form: the problem asks for interval notation, the answer is an inequality';
  return null;
}
