/**
 * String-level clean-up of one extracted answer before it is tokenised: math delimiters,
 * `\left`/`\right`, fraction variants, spacing commands, thousands separators, currency,
 * percent words, trailing punctuation and doubly escaped commands.
 */

/** Commands that a doubly escaped source (`\\frac`) means; `\\` before anything else stays a row break. */
const ESCAPED_COMMANDS =
  'frac|dfrac|tfrac|cfrac|sqrt|boxed|fbox|left|right|text|textbf|mathrm|mbox|pi|cdot|times|div|le|ge|leq|geq|lt|gt|neq|ne|infty|begin|end|pm|mp|sin|cos|tan|sec|csc|cot|log|ln|exp|in|cup|cap|circ|quad|qquad|approx|dots|ldots|cdots|alpha|beta|gamma|theta|lambda|mu|sigma|phi|omega|binom|sum|prod|int|lfloor|rfloor|lceil|rceil|overline|angle|degree|emptyset|varnothing|mathbb|mathbf|operatorname|displaystyle';

const DOUBLE_ESCAPED = new RegExp(`(^|[^\\\\])\\\\\\\\(?=(?:${ESCAPED_COMMANDS})(?![a-zA-Z]))`, 'g');

/** Cleans one answer string; never throws. */
export function normalizeAnswer(input: string): string {
  let s = input;
  // A raw "\n" typed as two characters (not \neq, \nu, ...) and real line breaks are spaces.
  s = s.replace(/\\\\?n(?![a-zA-Z])/g, ' ').replace(/[\r\n\t\f\v]+/g, ' ');
  s = s.replace(DOUBLE_ESCAPED, '$1\\');
  // Protect row breaks (`\\`) from the single-backslash rules below.
  s = s.replace(/\\\\/g, '\u0001');
  // Unicode forms of operators and constants.
  s = s
    .replace(/[\u2212\u2013\u2014]/g, '-')
    .replace(/\u00d7/g, '\\times ')
    .replace(/[\u00b7\u22c5]/g, '\\cdot ')
    .replace(/\u00f7/g, '\\div ')
    .replace(/\u2264/g, '\\le ')
    .replace(/\u2265/g, '\\ge ')
    .replace(/\u2260/g, '\\ne ')
    .replace(/\u00b1/g, '\\pm ')
    .replace(/\u221e/g, '\\infty ')
    .replace(/\u03c0/g, '\\pi ')
    .replace(/\u221a/g, '\\sqrt ')
    .replace(/\u222a/g, '\\cup ')
    .replace(/\u00b2/g, '^2')
    .replace(/\u00b3/g, '^3')
    .replace(/\u00b0/g, '^\\circ ')
    .replace(/\uff1a/g, ':')
    .replace(/\uff0c/g, ',');
  // Currency: \$ and stray $ (math delimiters were split off during extraction, the rest is noise).
  s = s.replace(/\\\$/g, ' ').replace(/\$/g, ' ');
  s = s.replace(/\\\(|\\\)|\\\[|\\\]/g, ' ');
  s = s.replace(/[€£¥]/g, ' ');
  s = s.replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\s*\.?/g, '');
  s = s.replace(/\\(?:dfrac|tfrac|cfrac)(?![a-zA-Z])/g, '\\frac');
  s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![a-zA-Z])/g, ' ');
  s = s.replace(/\\lbrace(?![a-zA-Z])/g, '\\{').replace(/\\rbrace(?![a-zA-Z])/g, '\\}');
  s = s.replace(/\\(?:lvert|rvert|vert)(?![a-zA-Z])/g, '|');
  // Thousands separators written as {,} or ,\! or \, between digit groups.
  s = s.replace(/(\d)\s*\{\s*,\s*\}\s*(?=\d{3})/g, '$1,');
  s = s.replace(/(\d),\\!\s*(?=\d{3}(?!\d))/g, '$1,');
  s = s.replace(/(\d)\\[,!]\s*(?=\d{3}(?!\d))/g, '$1');
  s = s.replace(/\\!/g, '');
  s = s.replace(/\\q?quad/g, ' ').replace(/\\[,;:> ]/g, ' ').replace(/~/g, ' ');
  s = s.replace(/\*\*/g, '^');
  // `W(x)=1orW(x)=-1`: a glued "or"/"and" between two answers.
  s = s.replace(/([\d)])(or|and)(?=[A-Z(\\])/g, '$1 $2 ');
  // Degrees and percent.
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z])|\\circ(?![a-zA-Z])/g, '\\degree ');
  s = s.replace(/\\%/g, '%');
  s = s.replace(/(\d|\})\s*(?:\\text\{\s*(?:percent|percentage|pct)\s*\}|percentage|percent|pct)(?![a-zA-Z])/gi, '$1%');
  // Clock times with a.m./p.m. become 24-hour times (`08:34 \\text{P.M.}` -> `20:34`).
  s = s.replace(/(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:\\text\{\s*)?([AaPp])\.?\s*[Mm]\.?\s*\}?/g, (_m, h: string, mm: string, ss: string | undefined, ap: string) => {
    let hour = Number(h) % 12;
    if (ap.toLowerCase() === 'p') hour += 12;
    return `${hour}:${mm}${ss !== undefined ? ':' + ss : ''}`;
  });
  s = s.replace(/\u0001/g, '\\\\').trim();
  // Trailing sentence punctuation and a stray trailing backslash (`185\`).
  for (let guard = 0; guard < 8; guard++) {
    // `!` stays: it is a factorial.
    const t = s.replace(/(?:\\\\|\\|[.,;:?。，])\s*$/, '').trim();
    if (t === s) break;
    s = t;
  }
  // A whole answer of digit groups separated by spaces is one number (`1 000`).
  if (/^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$/.test(s)) s = s.replace(/ /g, '');
  return s.replace(/\s+/g, ' ');
}

/** `1,22` / `0,111` / `1000,99` read as decimal numbers written with a comma (a European habit). */
export function decimalCommaForm(s: string): string | null {
  const m = /^(-?)(\d+),(\d+)$/.exec(s);
  if (m === null) return null;
  const [, sign, int, frac] = m as unknown as [string, string, string, string];
  if (frac.length === 3 && int !== '0' && int.length <= 3) return null; // thousands separator
  if (frac.length === 1 && int.length < 4 && int !== '0') return null; // a list `1,2`
  return `${sign}${int}.${frac}`;
}
