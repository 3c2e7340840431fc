/**
 * The options of a multiple-choice question, `(A) Line (B) Circle ...`, `$\textbf{(A)}\ 6 \qquad \textbf{(B)}\ 7$`
 * or one `A. ...` per line, so that a letter can be graded against an option's text and the reverse.
 */

/** `(A)` not glued to a word before it (`dot(A)` and `P(A)` in a diagram or a formula are not options). */
const PAREN_MARK = /(?<![A-Za-z0-9_\\])\(\s*([A-J])\s*\)/g;
/** `A. text`, `A) text`, `A: text` at the start of a line. */
const LINE_MARK = /^[ \t]*([A-J])[.):][ \t]+/gm;

interface Mark {
  letter: string;
  start: number;
  end: number;
}

/** The first run A, B, C, ... among `marks` (each after the previous one), or [] when it has fewer than 2 options. */
function sequence(marks: Mark[]): Mark[] {
  const out: Mark[] = [];
  for (const m of marks) {
    const want = String.fromCharCode(65 + out.length);
    if (m.letter === want && (out.length === 0 || m.start >= (out[out.length - 1] as Mark).end)) out.push(m);
    else if (m.letter === 'A' && out.length < 2) out.splice(0, out.length, m);
  }
  return out.length >= 2 ? out : [];
}

/** An option's text without its LaTeX layout: `}\ 6 \qquad` -> `6`. */
function cleanOption(s: string): string {
  return s
    .replace(/^\s*\}+/, '')
    .replace(/(?:\\(?:textbf|text|mathrm|mathbf|mbox))?\s*\{\s*$/, '')
    .replace(/\\qquad|\\quad|\\hspace\{[^}]*\}|\\[ ,;!]|~/g, ' ')
    .replace(/\$/g, '')
    .replace(/\\\\\s*$/, '')
    .trim()
    .replace(/[,;]$/, '')
    .trim();
}

/** The options listed in `problem`, by letter (`C` -> `Plane`); null when it lists none. */
export function questionChoices(problem: string): Map<string, string> | null {
  for (const re of [PAREN_MARK, LINE_MARK]) {
    const marks = [...problem.matchAll(re)].map((m) => ({ letter: m[1] as string, start: m.index, end: m.index + m[0].length }));
    const seq = sequence(marks);
    if (seq.length === 0) continue;
    const out = new Map<string, string>();
    seq.forEach((m, i) => {
      const next = seq[i + 1];
      let text = problem.slice(m.end, next === undefined ? problem.length : next.start);
      if (next === undefined) text = text.split(/\n/)[0] as string;
      out.set(m.letter, cleanOption(text));
    });
    if ([...out.values()].every((t) => t.length > 0)) return out;
  }
  return null;
}

/** Text compared loosely, to tell whether `(C) 12` repeats option C's own text. */
const loose = (s: string): string =>
  s
    .replace(/\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}/g, '$1')
    .replace(/\\left|\\right|\$|\s+/g, '')
    .replace(/\\[dt]frac/g, '\\frac')
    .replace(/\.$/, '')
    .toLowerCase();

const BARE = /^\(?([A-J])\)?$/;
const LABELLED = /^\(?([A-J])\)?\s*[.:]?\s*(.+)$/s;

/**
 * The letter an answer gives among `choices`: a bare letter (`C`, `(C)`, `\text{(C)}`), or a letter followed by
 * the text of that same option (`(C) Plane`, `\textbf{(C)}\ 12`); null otherwise.
 */
export function answerLetter(answer: string, choices: ReadonlyMap<string, string>): string | null {
  const bare = answer.replace(/\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}/g, '$1').trim();
  const b = BARE.exec(bare.replace(/\s+/g, ''));
  if (b) return choices.has(b[1] as string) ? (b[1] as string) : null;
  const l = LABELLED.exec(bare);
  if (l === null || !/^\(|^[A-J]\s*[.:)]/.test(bare)) return null;
  const option = choices.get(l[1] as string);
  return option !== undefined && loose(option) === loose(cleanOption(l[2] as string)) ? (l[1] as string) : null;
}
