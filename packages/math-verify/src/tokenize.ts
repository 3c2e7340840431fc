/** Splits a normalised answer into tokens: numbers, words, commands, text groups and operators. */

type TokType = 'num' | 'word' | 'cmd' | 'text' | 'op' | 'eof';

export interface Token {
  t: TokType;
  /** Digits for `num`, letters for `word`, name without backslash for `cmd`, content for `text`, the symbol for `op`. */
  v: string;
  /** Whitespace came right before this token. */
  sp: boolean;
}

/** Commands whose braced argument is words, not mathematics. */
const TEXT_COMMANDS = new Set([
  'text',
  'textbf',
  'textit',
  'textnormal',
  'textrm',
  'textsf',
  'texttt',
  'mathrm',
  'mathbf',
  'mathit',
  'mathsf',
  'mathtt',
  'mbox',
  'hbox',
  'operatorname',
  'emph',
]);

/** Longest answer the tokenizer accepts (the caller refuses longer ones before this). */
const MAX_TOKENS = 100_000;

class TokenizeError extends Error {}

/** Index of the `}` matching the `{` at `open`, or -1. */
function matchBrace(s: string, open: number, openCh = '{', closeCh = '}'): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const ch = s[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === openCh) depth++;
    else if (ch === closeCh) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';
const isLetter = (ch: string | undefined): boolean => ch !== undefined && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'));
/** Letters of other scripts (Chinese units, accented words) tokenise as words too. */
const isWordChar = (ch: string | undefined): boolean => ch !== undefined && (isLetter(ch) || (ch.charCodeAt(0) > 127 && /\p{L}/u.test(ch)));

/** True when the number at `i` opens a bracketed pair such as `(12,102)` or `[-36,104]` (not a thousands group). */
function insideBrackets(s: string, i: number): boolean {
  let k = i - 1;
  while (k >= 0 && (s[k] === ' ' || s[k] === '-' || s[k] === '+')) k--;
  const ch = s[k];
  return ch === '(' || ch === '[' || ch === '{';
}

export function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let sp = false;
  const push = (t: TokType, v: string): void => {
    if (out.length >= MAX_TOKENS) throw new TokenizeError('answer has too many tokens');
    out.push({ t, v, sp });
    sp = false;
  };
  while (i < s.length) {
    const ch = s[i] as string;
    if (ch === ' ') {
      sp = true;
      i++;
      continue;
    }
    if (isDigit(ch) || (ch === '.' && isDigit(s[i + 1]))) {
      let j = i;
      while (isDigit(s[j])) j++;
      // Thousands groups: 1,234,567 (every group exactly three digits, first group 1-3 digits, not 0).
      if (s[j] === ',' && j - i <= 3 && s[i] !== '0' && /^,\d{3}(?!\d)/.test(s.slice(j, j + 5)) && !insideBrackets(s, i)) {
        let k = j;
        while (/^,\d{3}(?!\d)/.test(s.slice(k, k + 5))) k += 4;
        const rest = s[k];
        // `(1,234)` style pairs are rare; a group followed by another digit-comma is still a number.
        if (rest !== ',' || !isDigit(s[k + 1])) j = k;
      }
      if (s[j] === '.' && isDigit(s[j + 1])) {
        j++;
        while (isDigit(s[j])) j++;
      } else if (s[j] === '.' && !isLetter(s[j + 1]) && s[j + 1] !== '.' && isDigit(s[i])) {
        j++; // `5.` as a number
      }
      push('num', s.slice(i, j).replace(/,/g, ''));
      i = j;
      continue;
    }
    if (isWordChar(ch)) {
      let j = i;
      while (isWordChar(s[j])) j++;
      push('word', s.slice(i, j));
      i = j;
      continue;
    }
    if (ch === '\\') {
      const next = s[i + 1];
      if (next === undefined) {
        i++;
        continue;
      }
      if (isLetter(next)) {
        let j = i + 1;
        while (isLetter(s[j])) j++;
        const name = s.slice(i + 1, j);
        if (TEXT_COMMANDS.has(name)) {
          let k = j;
          while (s[k] === ' ') k++;
          if (s[k] === '{') {
            const end = matchBrace(s, k);
            if (end < 0) throw new TokenizeError(`unbalanced braces after \\${name}`);
            push(name === 'operatorname' ? 'cmd' : 'text', s.slice(k + 1, end).trim());
            i = end + 1;
            continue;
          }
        }
        push('cmd', name);
        i = j;
        continue;
      }
      if (next === '\\') {
        push('op', '\\\\');
        i += 2;
        continue;
      }
      push('op', '\\' + next);
      i += 2;
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === '<=' || two === '>=' || two === '!=' || two === '=<') {
      push('op', two === '=<' ? '<=' : two);
      i += 2;
      continue;
    }
    push('op', ch);
    i++;
  }
  push('eof', '');
  return out;
}
