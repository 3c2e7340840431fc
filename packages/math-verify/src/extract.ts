/**
 * Finds the final answer in a completion. The default (training rewards) reads only `\boxed{}` /
 * `\fbox{}`; eval-only fallbacks (anchors such as "the final answer is", the last math environment,
 * the last number) are opt-in, because they reward answers that were never committed to.
 */
import { type Box, answerBoxes, findBoxes } from '@rlvr/core';
import { EMPTY_SET_WORDS } from './parse-vocabulary.js';

/** Fallbacks (anchors, math environments, numbers) look only at this many final characters of a completion. */
export const FALLBACK_WINDOW = 20_000;
/** An anchored answer is read from at most this many characters after its anchor. */
const ANCHOR_SPAN = 2_000;

/** The boxed answer of a text: its content as one answer string, and where its boxes are. */
export interface BoxedAnswer {
  /** The contents of the answer's boxes, trimmed, unwrapped (`\boxed{\boxed{1}}`), deduplicated, joined by `, `. */
  content: string;
  /**
   * Where the answer is, as UTF-16 indices into the text: from the first box's `\boxed{` (`start`, `contentStart`) to
   * the last box's closing brace (`contentEnd`, `end`). Several boxes of one answer (`\boxed{1}, \boxed{2}`) give
   * one range over all of them, as core's `answerBoxes` defines for the span locator.
   */
  range: Box;
}

/**
 * The boxes that make up the final (or first) answer of `text` (core's `findBoxes` and `answerBoxes`, the one box
 * finder of rlvr), or null when there is no box. `unclosedToEnd`: an unbalanced box runs to the end (gold answers
 * typed by people).
 */
export function boxedAnswer(text: string, which: 'first' | 'last', unclosedToEnd = false): BoxedAnswer | null {
  const boxes = findBoxes(text, { unclosedToEnd });
  const picked = answerBoxes(text, boxes, which);
  if (picked === null) return null;
  const first = boxes[picked.first] as Box;
  const last = boxes[picked.last] as Box;
  const contents: string[] = [];
  for (const b of boxes.slice(picked.first, picked.last + 1)) {
    const c = unwrapBoxes(text.slice(b.contentStart, b.contentEnd).trim());
    if (!contents.includes(c)) contents.push(c);
  }
  return {
    content: contents.join(', '),
    range: { start: first.start, contentStart: first.contentStart, contentEnd: last.contentEnd, end: last.end },
  };
}

/** `\boxed{\boxed{12}}` -> `12`. */
function unwrapBoxes(s: string): string {
  for (let guard = 0; guard < 8; guard++) {
    const inner = findBoxes(s);
    if (inner.length !== 1 || (inner[0] as Box).start !== 0 || (inner[0] as Box).end !== s.length) return s;
    const b = inner[0] as Box;
    s = s.slice(b.contentStart, b.contentEnd).trim();
  }
  return s;
}

export interface MathEnv {
  start: number;
  end: number;
  content: string;
}

/** Math environments `$$..$$`, `\[..\]`, `\(..\)`, `$..$` (inline ones may not span a line break), left to right. */
export function findMathEnvs(text: string): MathEnv[] {
  const out: MathEnv[] = [];
  const re = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([^\n]+?)\\\)|(?<!\\)\$((?:\\\$|[^$\n])+?)(?<!\\)\$/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const content = m[1] ?? m[2] ?? m[3] ?? m[4] ?? '';
    if (content.trim().length > 0) out.push({ start: m.index, end: m.index + m[0].length, content: content.trim() });
  }
  return out;
}

/** Words that may appear in an answer without making it prose. */
const MATH_WORDS = new Set([
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'log',
  'exp',
  'sqrt',
  'frac',
  'and',
  'percent',
  'pct',
  'percentage',
  'infty',
  'pmatrix',
  'bmatrix',
  'matrix',
  'begin',
  'end',
  'cdot',
  'times',
  'left',
  'right',
  'quad',
  'text',
  'mathrm',
  'dfrac',
  'tfrac',
  'boxed',
  'leq',
  'geq',
  'neq',
  'approx',
  'cup',
  'cap',
  'circ',
  'degree',
  'array',
  'cases',
  'units',
  'unit',
]);

/** True when `s` reads as sentences rather than one answer (a long word outside `\text{}`, or two medium ones). */
export function looksLikeProse(s: string): boolean {
  const bare = s.replace(/\\[a-zA-Z]+\{[^{}]*\}/g, ' ').replace(/\\[a-zA-Z]+/g, ' ');
  let medium = 0;
  for (const m of bare.matchAll(/\p{L}{2,}/gu)) {
    const w = m[0].toLowerCase();
    // Scripts without spaces (Chinese, Japanese) write whole sentences as one short run.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, control characters included on purpose
    if (/[^\x00-\x7f]/.test(w)) return true;
    if (w.length < 3 || MATH_WORDS.has(w) || /^[A-Z]{1,8}$/.test(m[0])) continue; // point names: ABCD
    if (w.length >= 4) return true;
    if (++medium >= 2) return true;
  }
  return false;
}

/** Prose that answers with the empty set ("There are no solutions."), which the fallbacks may read as an answer. */
export function saysEmptySet(s: string): boolean {
  return s.length <= 60 && EMPTY_SET_WORDS.test(s.toLowerCase().replace(/[\s.]+/g, ''));
}

const FORMULA = /\\frac\{[^{}]*\}\{[^{}]*\}|\\sqrt\{[^{}]*\}|-?(?<![A-Za-z])\d+(?:[.,]\d+)*(?:\s*\/\s*\d+)?/;

/** [anchor, anchor + answer] pairs in priority order. */
const ANCHORS: [RegExp, RegExp][] = [
  [/final answer/gi, /^final answer(?:\s+is)?\s*[:：]?\s*([\s\S]*?)(?:\.?\s*I hope|$)/i],
  [/<answer>/gi, /^<answer>([\s\S]*?)<\/answer>/i],
  [/answer\s*(?:is|[:：])/gi, /^answer\s*(?:is|[:：])\s*([^\n]*)/i],
  [/(?:答案|最终答案)\s*(?:是|为|[:：])/g, /^(?:答案|最终答案)\s*(?:是|为|[:：])\s*([^\n]*)/],
  [/r[ée]ponse\s*(?:est|[:：])/gi, /^r[ée]ponse\s*(?:est|[:：])\s*([^\n]*)/i],
];

/** The text that follows the last "final answer is" / "Answer:" style anchor, trimmed to the answer itself. */
export function anchoredAnswers(text: string): string[] {
  const out: string[] = [];
  for (const [head, re] of ANCHORS) {
    // Find the last anchor with a cheap pattern, then read the answer from a bounded span after it.
    let at = -1;
    head.lastIndex = 0;
    for (let m = head.exec(text); m !== null; m = head.exec(text)) at = m.index;
    if (at < 0) continue;
    re.lastIndex = 0;
    const m = re.exec(text.slice(at, at + ANCHOR_SPAN));
    if (m === null) continue;
    const last = m[1] ?? '';
    let t = last
      .replace(/\.?\s*I hope[\s\S]*$/i, '')
      .replace(/<\|[\s\S]*$/, '')
      .trim();
    // "The volume of $V$ is 120." -> "120"
    const is = t.lastIndexOf(' is ');
    if (is >= 0 && looksLikeProse(t.slice(0, is)) && !looksLikeProse(t.slice(is + 4))) t = t.slice(is + 4);
    t = t
      .replace(/^[:：\s]+/, '')
      .replace(/\s*\.\s*$/, '')
      .replace(/^"|"$/g, '')
      .trim();
    if (looksLikeProse(t) && !saysEmptySet(t)) {
      // "Janeth aura encore 220 $ à payer" -> the first formula or number after the anchor.
      const env = findMathEnvs(t)[0];
      const f = FORMULA.exec(t);
      t = env ? env.content : f ? f[0] : '';
    }
    if (t.length > 0) out.push(t);
  }
  // Markdown bold near the end (`**60 ريالاً**`): the number or formula it holds.
  let bold: string | null = null;
  for (const m of text.slice(-ANCHOR_SPAN).matchAll(/\*\*([^*\n]{1,80})\*\*/g)) bold = m[1] ?? null;
  if (bold !== null) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, control characters included on purpose
    const f = /^[\x00-\x7f]*$/.test(bold) && !looksLikeProse(bold) ? bold.trim() : FORMULA.exec(bold)?.[0];
    if (f) out.push(f);
  }
  return out;
}

/** The last (or first) number in free text: `1,000.99`, `-3`, `2/3`, `.5`. */
export function numberAnswer(text: string, which: 'first' | 'last'): { start: number; content: string } | null {
  const re = /(?<![A-Za-z\d.])-?(?:\d+(?:[.,]\d+)*|\.\d+)(?:\s*\/\s*\d+(?:\.\d+)?)?%?/g;
  let first: { start: number; content: string } | null = null;
  let last: { start: number; content: string } | null = null;
  for (const m of text.matchAll(re)) {
    last = { start: m.index, content: m[0] };
    first ??= last;
  }
  return which === 'first' ? first : last;
}

/** The Minerva sentence "The final answer is X. I hope it is correct." (Math-Verify ranks it above boxes by default). */
export function minervaAnswer(text: string): { start: number; content: string } | null {
  let at = -1;
  for (const m of text.matchAll(/final answer is/gi)) at = m.index;
  if (at < 0) return null;
  const m = /^final answer is\s*([\s\S]*?)\.?\s*I hope it is correct/i.exec(text.slice(at, at + ANCHOR_SPAN));
  return m === null ? null : { start: at, content: (m[1] ?? '').replace(/\\?"/g, ' ').trim() };
}

/** Start of the last box, or -1. */
export function lastBoxStart(text: string): number {
  const boxes = findBoxes(text);
  return boxes.length === 0 ? -1 : (boxes[boxes.length - 1] as Box).start;
}

/** Index just past the last reasoning delimiter (`</think>`), or -1 when none occurs. */
export function reasoningEnd(text: string, delimiters: readonly string[]): number {
  let best = -1;
  let end = -1;
  for (const d of delimiters) {
    const i = text.lastIndexOf(d);
    if (i > best) {
      best = i;
      end = i + d.length;
    }
  }
  return end;
}

/** Where the final answer of a reasoning model's completion is: after its think blocks. */
export type AnswerPart = { text: string; base: number } | { unclosed: true };

/**
 * The part of `text` that holds the final answer, given think tags (`[['<think>', '</think>']]`): the text after the
 * last closing tag, the whole text when no tag occurs, and `unclosed` when a think block opens and never closes (a
 * trace cut off by the token limit has no final answer: a box inside it is a draft). An explicit `<answer>` after the
 * open block ends the reasoning there (`<think>...<answer>5</answer>`). `base`: where the part starts in `text`.
 */
export function answerPart(text: string, tags: readonly (readonly [string, string])[]): AnswerPart {
  let closeEnd = -1;
  for (const [, close] of tags) {
    const i = text.lastIndexOf(close);
    if (i >= 0) closeEnd = Math.max(closeEnd, i + close.length);
  }
  let open = -1;
  for (const [start] of tags) {
    const i = text.lastIndexOf(start);
    if (i >= 0 && i >= closeEnd) open = Math.max(open, i);
  }
  if (open >= 0) {
    const answer = text.indexOf('<answer>', open);
    return answer < 0 ? { unclosed: true } : { text: text.slice(answer), base: answer };
  }
  return closeEnd < 0 ? { text, base: 0 } : { text: text.slice(closeEnd), base: closeEnd };
}

/**
 * Whether the final answer of `text` is a `\boxed{` whose brace never closes (a completion cut off inside its
 * answer): an unclosed box with no closed box after its start (for `'first'`: an unclosed box and no closed one).
 * Such a completion has no final answer, and the fallbacks must not read the digits inside the cut box either.
 */
export function finalBoxUnclosed(text: string, which: 'first' | 'last'): boolean {
  const all = findBoxes(text, { unclosedToEnd: true });
  const last = all[all.length - 1];
  if (last === undefined || last.end !== text.length || last.contentEnd !== last.end || text[last.contentStart - 1] !== '{') return false;
  const closed = findBoxes(text);
  if (which === 'first') return closed.length === 0;
  return closed.every((b) => b.start < last.start);
}

/** A gold that is a choice: a letter, maybe in parentheses or with a period, maybe followed by the option's text (`(D) Alina`). */
const CHOICE_GOLD = /^\(?([A-Z])\)?[.:)]?(?:\s+\p{L}[\s\S]*)?$/u;

const unwrapText = (s: string): string =>
  s
    .replace(/\\(?:boxed|text|textbf|mathrm|mathbf)\{([^{}]*)\}/g, '$1')
    .replace(/\$/g, '')
    .trim();

/** The letter of a gold that is a choice among `letters` (`C`, `(C)`, `C. Cecile`), else null: what `mode: 'auto'` reads. */
export function choiceGold(gold: string, letters: string): string | null {
  const g = unwrapText(gold);
  // The whole gold, or its last line (`Alina and the answer is\n(C) Cecile`).
  const m = CHOICE_GOLD.exec(g) ?? CHOICE_GOLD.exec(g.slice(g.lastIndexOf('\n') + 1).trim());
  return m && letters.includes(m[1] as string) ? (m[1] as string) : null;
}

/**
 * `mode: 'auto'` with a choice gold: whether the completion answers with a letter (a boxed letter, or prose, or a
 * bare letter) rather than with a formula that merely contains one (`\mathrm{E}*2`), which is graded as math.
 */
export function answersWithLetter(text: string, letters: string): boolean {
  const boxed = boxedAnswer(text, 'last');
  if (boxed !== null) return choiceGold(boxed.content, letters) !== null;
  const t = unwrapText(text);
  return looksLikeProse(t) || !/[\d+\-*/^=\\]/.test(t);
}

const CHOICE_ANCHOR =
  /(?:answer|r[ée]ponse|答案|option|choice)\s*(?:is|est|是|为|[:：])?\s*(?:for sure\s*)?[:：]?\s*\(?\s*([A-Z])\b(?![a-z])/gi;

/**
 * A multiple-choice letter from `letters`: after an "answer is"/"Answer:" anchor, else a letter opening the text
 * (`(D) Alina`, `B。不是 A`), else the last standalone letter.
 */
export function choiceAnswer(text: string, letters: string): string | null {
  const ok = (ch: string | undefined): ch is string => ch !== undefined && letters.includes(ch.toUpperCase()) && ch === ch.toUpperCase();
  // A boxed letter is the committed answer (`\boxed{C}`, `\boxed{\text{(C)}}`).
  const boxed = boxedAnswer(text, 'last');
  const inBox =
    boxed === null ? null : CHOICE_GOLD.exec(boxed.content.replace(/\\(?:text|textbf|mathrm|mathbf)\{([^{}]*)\}/g, '$1').trim());
  if (inBox && ok(inBox[1])) return inBox[1];
  let anchored: string | null = null;
  CHOICE_ANCHOR.lastIndex = 0;
  for (let m = CHOICE_ANCHOR.exec(text); m !== null; m = CHOICE_ANCHOR.exec(text)) if (ok(m[1])) anchored = m[1];
  if (anchored) return anchored;
  const t = text.replace(/\\boxed\{|\\text\{|\\textbf\{|\\mathrm\{|[{}$*]/g, '').trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, control characters included on purpose
  const lead = /^\(?([A-Z])(?:\)|[.。:：,，]|\s|$|(?=[^\x00-\x7f]))/.exec(t);
  if (lead && ok(lead[1])) return lead[1];
  let last: string | null = null;
  for (const m of t.matchAll(/(?<![A-Za-z])([A-Z])(?![A-Za-z])/g)) if (ok(m[1])) last = m[1] as string;
  return last;
}
