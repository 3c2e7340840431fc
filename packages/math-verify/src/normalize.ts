/**
 * String-level clean-up of one extracted answer before it is tokenised: math delimiters,
 * `\left`/`\right`, fraction variants, spacing commands, thousands separators, currency,
 * percent words, trailing punctuation and doubly escaped commands.
 */

/** Commands that a doubly escaped source (`\\frac`) means; `\\` before anything else stays a row break. */
const ESCAPED_COMMANDS =
  'frac|dfrac|tfrac|cfrac|sqrt|boxed|fbox|left|right|text|textbf|mathrm|mbox|pi|cdot|times|div|le|ge|leq|geq|lt|gt|neq|ne|infty|begin|end|pm|mp|sin|cos|tan|sec|csc|cot|log|ln|exp|in|cup|cap|circ|quad|qquad|approx|dots|ldots|cdots|alpha|beta|gamma|theta|lambda|mu|sigma|phi|omega|binom|sum|prod|int|lfloor|rfloor|lceil|rceil|overline|angle|degree|emptyset|varnothing|mathbb|mathbf|operatorname|displaystyle';

const DOUBLE_ESCAPED = new RegExp(`(^|[^\\\\])\\\\\\\\(?=(?:${ESCAPED_COMMANDS})(?![a-zA-Z]))`, 'g');

/**
 * Full-width forms (`３`, `（`, `＋`, U+FF01-FF5E) and the ideographic space become ASCII; Arabic-Indic, Persian and
 * Devanagari digits become ASCII digits. One UTF-16 unit each way, so offsets are unchanged.
 */
export function toAsciiForms(s: string): string {
  if (!/[\uff01-\uff5e\u3000\u0660-\u0669\u06f0-\u06f9\u0966-\u096f]/.test(s)) return s;
  return s.replace(/[\uff01-\uff5e\u3000\u0660-\u0669\u06f0-\u06f9\u0966-\u096f]/g, (ch) => {
    const c = ch.charCodeAt(0);
    if (c === 0x3000) return ' ';
    if (c >= 0xff01 && c <= 0xff5e) return String.fromCharCode(c - 0xfee0);
    if (c >= 0x0660 && c <= 0x0669) return String.fromCharCode(c - 0x0630);
    if (c >= 0x06f0 && c <= 0x06f9) return String.fromCharCode(c - 0x06c0);
    return String.fromCharCode(c - 0x0936);
  });
}

/** Characters outside ASCII: only then can the Unicode and currency rules below match. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, control characters included on purpose
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Cleans one answer string; never throws. Each group of rules runs only when the characters it needs are present
 * (a backslash, `$`, a non-ASCII character): the skipped rules could not match, so the result is the same, and most
 * answers skip most of them (this runs several times per graded answer).
 */
export function normalizeAnswer(input: string): string {
  let s = toAsciiForms(input);
  const nonAscii = NON_ASCII.test(s);
  // A raw "\n" typed as two characters (not \neq, \nu, ...) and real line breaks are spaces.
  if (s.includes('\\')) s = s.replace(/\\\\?n(?![a-zA-Z])/g, ' ');
  s = s.replace(/[\r\n\t\f\v]+/g, ' ');
  if (s.includes('\\')) {
    s = s.replace(DOUBLE_ESCAPED, '$1\\');
    // Protect row breaks (`\\`) from the single-backslash rules below.
    s = s.replace(/\\\\/g, '\u0001');
  }
  // Unicode forms of operators and constants.
  if (nonAscii)
    s = s
      .replace(/[\u2212\u2013\u2014]/g, '-')
      .replace(/\u00d7/g, '\\times ')
      .replace(/[\u00b7\u22c5]/g, '\\cdot ')
      .replace(/\u00f7/g, '\\div ')
      .replace(/\u2264/g, '\\le ')
      .replace(/\u2248/g, '\\approx ')
      .replace(/\u2265/g, '\\ge ')
      .replace(/\u2260/g, '\\ne ')
      .replace(/\u00b1/g, '\\pm ')
      .replace(/\u221e/g, '\\infty ')
      .replace(/\u03c0/g, '\\pi ')
      .replace(/\u221a/g, '\\sqrt ')
      .replace(/\u222a/g, '\\cup ')
      .replace(/\u2205/g, '\\emptyset ')
      .replace(/\u00b2/g, '^2')
      .replace(/\u00b3/g, '^3')
      .replace(/\u00b0/g, '^\\circ ')
      .replace(/\uff1a/g, ':')
      .replace(/\uff0c/g, ',');
  // Currency: \$ and stray $ (math delimiters were split off during extraction, the rest is noise).
  if (s.includes('$')) s = s.replace(/\\\$/g, ' ').replace(/\$/g, ' ');
  // No rule below writes a backslash where there was none, so without one every backslash rule is a no-op.
  const backslash = s.includes('\\');
  if (backslash) s = s.replace(/\\\(|\\\)|\\\[|\\\]/g, ' ');
  if (nonAscii) s = s.replace(/[€£¥]/g, ' ');
  if (backslash) {
    s = s.replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\s*\.?/g, '');
    s = s.replace(/\\(?:dfrac|tfrac|cfrac)(?![a-zA-Z])/g, '\\frac');
    s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![a-zA-Z])/g, ' ');
    s = s.replace(/\\lbrace(?![a-zA-Z])/g, '\\{').replace(/\\rbrace(?![a-zA-Z])/g, '\\}');
    s = s.replace(/\\(?:lvert|rvert|vert)(?![a-zA-Z])/g, '|');
  }
  // Thousands separators written as {,} or ,\! or \, between digit groups.
  if (s.includes('{')) s = s.replace(/(\d)\s*\{\s*,\s*\}\s*(?=\d{3})/g, '$1,');
  if (backslash) {
    s = s.replace(/(\d),\\!\s*(?=\d{3}(?!\d))/g, '$1,');
    s = s.replace(/(\d)\\[,!]\s*(?=\d{3}(?!\d))/g, '$1');
    s = s.replace(/\\!/g, '');
    s = s.replace(/\\q?quad/g, ' ').replace(/\\[,;:> ]/g, ' ');
  }
  if (s.includes('~')) s = s.replace(/~/g, ' ');
  if (s.includes('**')) s = s.replace(/\*\*/g, '^');
  // `W(x)=1orW(x)=-1`: a glued "or"/"and" between two answers.
  s = s.replace(/([\d)])(or|and)(?=[A-Z(\\])/g, '$1 $2 ');
  // Degrees and percent.
  if (backslash) {
    s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z])|\\circ(?![a-zA-Z])/g, '\\degree ');
    s = s.replace(/\\%/g, '%');
  }
  s = s.replace(/(\d|\})\s*(?:\\text\{\s*(?:percent|percentage|pct)\s*\}|percentage|percent|pct)(?![a-zA-Z])/gi, '$1%');
  // Clock times with a.m./p.m. become 24-hour times (`08:34 \\text{P.M.}` -> `20:34`).
  if (s.includes(':'))
    s = s.replace(
      /(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:\\text\{\s*)?([AaPp])\.?\s*[Mm]\.?\s*\}?/g,
      (_m, h: string, mm: string, ss: string | undefined, ap: string) => {
        let hour = Number(h) % 12;
        if (ap.toLowerCase() === 'p') hour += 12;
        return `${hour}:${mm}${ss !== undefined ? ':' + ss : ''}`;
      },
    );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0001 is the placeholder set above for an escaped backslash
  if (s.includes('\u0001')) s = s.replace(/\u0001/g, '\\\\');
  s = s.trim();
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

/**
 * The readings of a whole answer of digit groups joined by commas, without spaces (`56,144`, `56,76`, `1,22`):
 * - `number`: one number, when every group after the first has three digits and the first has one to three and does
 *   not start with 0 (a thousands separator: `58,500`), or, with `decimalComma`, when there is one comma
 *   (`1,22` = 1.22, `0,111` = 0.111); else null;
 * - `list`: the groups as a list of quantities (`56, 76`), always.
 * Null when the answer is not of that shape. Which reading counts is decided by the other side (grade.ts).
 */
export function commaReadings(s: string, decimalComma: boolean): { number: string | null; list: string } | null {
  const m = /^(-?)(\d+)((?:,\d+)+)$/.exec(s);
  if (m === null) return null;
  const [, sign, first, rest] = m as unknown as [string, string, string, string];
  const groups = rest.slice(1).split(',');
  const list = s.replace(/,/g, ', ');
  if (first.length <= 3 && !first.startsWith('0') && groups.every((g) => g.length === 3))
    return { number: sign + first + groups.join(''), list };
  if (decimalComma && groups.length === 1) return { number: `${sign}${first}.${groups[0] as string}`, list };
  return { number: null, list };
}
