/**
 * The one `\boxed{...}` finder of rlvr: the grader (`@rlvr/math-verify`) reads the answer it grades
 * from these boxes, and the span locator (`@rlvr/rollout`) turns the same boxes into the token spans
 * GRAIL weights, so the box that is rewarded and the box that is weighted can be compared exactly.
 *
 * It works on a string (UTF-16 indices) or on UTF-8 bytes (byte offsets, which token offsets map
 * onto); the delimiters are ASCII, so both give the same boxes.
 *
 * Rules (those of a regex `findall` with a recursive brace pattern, as the Python graders use):
 * - a box is `\boxed` or `\fbox` (also with a doubled backslash, as over-escaped JSON writes it),
 *   not followed by a letter, then optional spaces, then a brace group;
 * - the brace walk counts `{` and `}`; a backslash makes the next character literal, so `\{` and `\}`
 *   are literal braces and `\\}` is a line break followed by a closing brace;
 * - after a balanced box the scan resumes after its closing brace (`\boxed{\boxed{1}}` is one box);
 *   an unbalanced one is skipped and the scan resumes inside it (or, with `unclosedToEnd`, it runs
 *   to the end of the text: gold answers typed by people);
 * - `\boxed 5` (no braces) takes one token, up to a space or `$` (with `bare`, the default).
 */

/** A box: `[start, contentStart)` is the marker (`\boxed{`), `[contentStart, contentEnd)` the answer, `[contentEnd, end)` the closing brace (empty for a bare or unclosed box). */
export interface Box {
  start: number;
  contentStart: number;
  contentEnd: number;
  end: number;
}

export interface FindBoxesOptions {
  /** Box commands, without the backslash (default `boxed`, `fbox`). */
  commands?: readonly string[];
  /** `\boxed 5` is a box of one token (default true). */
  bare?: boolean;
  /** An unbalanced box runs to the end of the text instead of being skipped (default false). */
  unclosedToEnd?: boolean;
}

/** Which box is the answer: the reference reads the first for GRAIL's loss and the last for the reward. */
export type BoxChoice = 'first' | 'last';

const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const SPACE = 0x20;
const DOLLAR = 0x24;
const DEFAULT_COMMANDS = ['boxed', 'fbox'] as const;
const BARE_MAX = 200;

type Text = string | Uint8Array;
const codeAt = (t: Text, i: number): number => (typeof t === 'string' ? t.charCodeAt(i) : (t[i] ?? NaN));
const isLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isSpace = (c: number): boolean => c === SPACE || c === 0x09 || c === 0x0a || c === 0x0d;

const commandCodes = (commands: readonly string[]): number[][] => commands.map((c) => Array.from(c, (ch) => ch.charCodeAt(0)));
const DEFAULT_CODES = commandCodes(DEFAULT_COMMANDS);

/** All outermost boxes of `text`, left to right. Linear in the length of the text. */
export function findBoxes(text: Text, opts: FindBoxesOptions = {}): Box[] {
  // Every box starts with a backslash: most answers and many completions have none (the grader calls this often).
  if (!(typeof text === 'string' ? text.includes('\\') : text.includes(BACKSLASH))) return [];
  const commands = opts.commands === undefined ? DEFAULT_CODES : commandCodes(opts.commands);
  const bare = opts.bare ?? true;
  const n = text.length;
  // The brace table is built once, at the first box with a brace group, from there on (a `{` there is not escaped, so
  // the braces before it change no match after it): text without such a box never pays for it, and a completion whose
  // box is at its end pays for its end only.
  let close: Int32Array | null = null;
  let from = 0;
  const out: Box[] = [];
  let i = 0;
  while (i < n) {
    // Jump to the next backslash (a box starts with one): indexOf scans faster than a loop over every character.
    i = typeof text === 'string' ? text.indexOf('\\', i) : text.indexOf(BACKSLASH, i);
    if (i < 0) break;
    const start = i;
    let j = i + 1;
    if (codeAt(text, j) === BACKSLASH) j++;
    const len = commandAt(text, j, commands);
    if (len === 0) {
      i = j;
      continue;
    }
    let k = j + len;
    while (codeAt(text, k) === SPACE) k++;
    if (codeAt(text, k) === OPEN) {
      if (close === null) {
        from = k;
        close = matchingBraces(text, from);
      }
      const c = close[k - from]!;
      if (c >= 0) {
        out.push({ start, contentStart: k + 1, contentEnd: c, end: c + 1 });
        i = c + 1;
      } else if (opts.unclosedToEnd) {
        out.push({ start, contentStart: k + 1, contentEnd: n, end: n });
        break;
      } else {
        i = k + 1; // unbalanced: skip this occurrence, keep scanning inside it
      }
      continue;
    }
    if (bare && k > j + len) {
      let e = k;
      while (e < n && e - k < BARE_MAX && !isSpace(codeAt(text, e)) && codeAt(text, e) !== DOLLAR) e++;
      if (e > k) {
        out.push({ start, contentStart: k, contentEnd: e, end: e });
        i = e;
        continue;
      }
    }
    i = j + len;
  }
  return out;
}

/**
 * For every `{` at or after `from` the index of its matching `}` (-1 if none), every other index -1, at `index - from`:
 * one pass with a stack, from `from`, which must not be an escaped position.
 */
function matchingBraces(text: Text, from: number): Int32Array {
  const match = new Int32Array(text.length - from).fill(-1);
  const stack: number[] = [];
  for (let i = from; i < text.length; i++) {
    const c = codeAt(text, i);
    if (c === BACKSLASH) {
      i++;
      continue;
    }
    if (c === OPEN) stack.push(i);
    else if (c === CLOSE && stack.length > 0) match[stack.pop()! - from] = i;
  }
  return match;
}

/** Length of the box command (without backslash) at `i` when it is not followed by a letter, else 0. */
function commandAt(text: Text, i: number, commands: readonly number[][]): number {
  for (const cmd of commands) {
    let k = 0;
    while (k < cmd.length && codeAt(text, i + k) === cmd[k]) k++;
    if (k === cmd.length && !isLetter(codeAt(text, i + k))) return cmd.length;
  }
  return 0;
}

const SEPARATOR_GAP = /(?:^|[\s,;])(?:and|or|und|et|ou|y|o)(?:$|[\s,;])|[,;，；和及或]/i;
const decoder = new TextDecoder();

/**
 * Whether the text between two boxes joins them into one answer (`\boxed{1}, \boxed{2}`,
 * `\boxed{1} and \boxed{2}`): without math delimiters and spacing commands it is at most 10
 * characters, or at most five words including a separator (, ; and or).
 */
export function joinsBoxes(gap: string): boolean {
  const g = gap
    .replace(/\\text\{([^{}]*)\}/g, ' $1 ')
    .replace(/\$+|\\[()[\]]|\\q?quad|\\[,;:! ]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (g.length <= 10) return true;
  const words = g.split(' ').filter((w) => w.length > 0);
  return words.length <= 5 && SEPARATOR_GAP.test(g);
}

/**
 * The boxes that make up the first or the last answer of `text`: indices `[first, last]` into
 * `boxes` (adjacent boxes joined by `joinsBoxes`), or null when there is no box. The grader grades
 * their contents as one answer; the span locator covers them from the first marker to the last
 * closing brace.
 */
export function answerBoxes(text: Text, boxes: readonly Box[], which: BoxChoice): { first: number; last: number } | null {
  if (boxes.length === 0) return null;
  const gap = (a: Box, b: Box): string =>
    typeof text === 'string' ? text.slice(a.end, b.start) : decoder.decode(text.subarray(a.end, b.start));
  if (which === 'last') {
    const last = boxes.length - 1;
    let first = last;
    while (first > 0 && joinsBoxes(gap(boxes[first - 1]!, boxes[first]!))) first--;
    return { first, last };
  }
  let last = 0;
  while (last < boxes.length - 1 && joinsBoxes(gap(boxes[last]!, boxes[last + 1]!))) last++;
  return { first: 0, last };
}

/**
 * Whether the final answer of `text` is a `\boxed{` whose brace never closes (a completion cut off inside its
 * answer): an unclosed box with no closed box after its start (for `'first'`: an unclosed box and no closed one).
 * Such a text has no final answer: the grader gives `unclosed_box` (and its fallbacks must not read the digits inside
 * the cut box), and the span locator no span, rather than an earlier closed box.
 */
export function finalBoxUnclosed(text: Text, which: BoxChoice, opts: Omit<FindBoxesOptions, 'unclosedToEnd'> = {}): boolean {
  const all = findBoxes(text, { ...opts, unclosedToEnd: true });
  const last = all[all.length - 1];
  if (last === undefined || last.end !== text.length || last.contentEnd !== last.end || codeAt(text, last.contentStart - 1) !== OPEN)
    return false;
  const closed = findBoxes(text, opts);
  if (which === 'first') return closed.length === 0;
  return closed.every((b) => b.start < last.start);
}
