/**
 * The grading itself, on resolved options: extraction from a completion, parsing, comparison. Pure, synchronous and
 * bounded; never throws on any string. Imports no zod, so worker threads that load it start quickly; the public
 * entry points in verify.ts validate options first.
 */
import type { Box } from '@rlvr/core';
import { type Node, show } from './ast.js';
import { compareAnswers } from './compare.js';
import {
  FALLBACK_WINDOW,
  anchoredAnswers,
  answerPart,
  answersWithLetter,
  boxedAnswer,
  choiceAnswer,
  choiceGold,
  finalBoxUnclosed,
  findMathEnvs,
  looksLikeProse,
  lastBoxStart,
  minervaAnswer,
  numberAnswer,
  reasoningEnd,
  saysEmptySet,
} from './extract.js';
import { commaReadings, normalizeAnswer } from './normalize.js';
import type { VerifyOptions } from './options.js';
import { freeSymbols } from './evaluate.js';
import { parseWithUnits, textNode } from './parse.js';
import { type Limit, flagLimit } from './limits.js';
import { judgeWithProblem, problemFacts, problemOptions, unitAfter } from './problem/index.js';

/** The verdict on one pair, with the parsed forms so a user can see why. */
export interface VerifyResult {
  equal: boolean;
  /** Why: `exact`, `numeric`, `symbolic (sampled)`, `set`, `pred_unparseable`, `timeout`, ... */
  reason: string;
  /** The gold answer as it was compared (parsed form, or the normalised text). */
  gold: string | null;
  /** The predicted answer as it was compared. */
  pred: string | null;
  /** Set when an answer or the gold ran into a bound of the grader (then `equal` is false whatever the values). */
  limit?: Limit;
}

/** The reward for one completion. */
export interface RewardResult {
  reward: 0 | 1;
  /** The answer text taken from the completion (null when none was found). */
  extracted: string | null;
  reason: string;
  /**
   * Which box was graded: UTF-16 indices into the completion as given, in the shape of core's `Box` (`start` at the
   * backslash of the first `\boxed`, `contentStart`..`contentEnd` the answer, `end` past the last closing brace;
   * one range over several boxes of one answer). Null when the answer did not come from a box (eval fallbacks,
   * choice mode) or there is none. The span locator of `@rlvr/rollout` reads the same box with the same finder.
   */
  answer: Box | null;
  /** Set when the answer or the gold ran into a bound of the grader (then `reward` is 0 whatever the values). */
  limit?: Limit;
}

/** A candidate answer: its text, and its box in the completion when it came from one. */
interface Candidate {
  text: string;
  range: Box | null;
}

interface Parsed {
  /** The normalised text. */
  text: string;
  node: Node | null;
  error: string | null;
  /** Known units written after quantities (canonical names: `inch`, `centimeter^2`, `degree`). */
  units: string[];
  /** The list reading of a comma-grouped number (`56,144` as 56 and 144), when the answer has one. */
  list: Node | null;
  /** A stated approximation (`\approx 1.41`, `x = \frac13 \approx 0.33`): the value and the decimals it is given to. */
  approx: { node: Node; decimals: number } | null;
}

const FUNCTION_WORDS = /^(?:sin|cos|tan|sec|csc|cot|log|ln|exp|sqrt|pi)$/;
/** Whole answers that are words even when short (`No` is not the product N·o). */
const WORD_ANSWERS = /^(?:no|yes|true|false|none|neither|both|never|always|ok)$/i;
/** An answer that says it is approximate: `\approx 1.41`, `approximately 1.41`, `about 3`. */
const APPROX_PREFIX = /^(?:\\approx|\\sim|\\simeq|approximately|approx\.?|about|roughly|around|nearly)\s*(?=[-+\d.\\([{])/i;

/**
 * How JavaScript and Python print a number: `1e+21` (an explicit `+`), `1.5e-7`, `1e-05` (below 1e-4, so at least two
 * exponent digits with `-`). `2e-1` is left alone: written so, it is more likely 2e - 1 than 0.2.
 */
const SCIENTIFIC = /^(-?\d+(?:\.\d+)?)[eE](\+\d{1,4}|-\d{2,4}|-[5-9])$/;

function parseText(src: string): { node: Node; units: string[] } | { error: string } {
  try {
    return parseWithUnits(src);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** Digits after the point of the decimal literals in `n`: the most of them (-1 when there is none). */
function statedDecimals(n: Node): number {
  let best = -1;
  const walk = (x: Node): void => {
    if (x.k === 'num') best = Math.max(best, x.decimals, 0);
    for (const v of Object.values(x)) {
      if (Array.isArray(v))
        for (const y of v) (Array.isArray(y) ? y : [y]).forEach((z) => typeof z === 'object' && z !== null && 'k' in z && walk(z as Node));
      else if (typeof v === 'object' && v !== null && 'k' in v) walk(v as Node);
    }
  };
  walk(n);
  return best;
}

/** The stated approximation of a gold relation chain (`x = \frac13 \approx 0.33` -> 0.33 to 2 decimals), else null. */
function approximation(n: Node): Parsed['approx'] {
  if (n.k !== 'rel') return null;
  const at = n.ops.indexOf('~');
  const item = at < 0 ? undefined : n.items[at + 1];
  if (item === undefined || freeSymbols(item).size > 0) return null;
  const decimals = statedDecimals(item);
  return decimals < 0 ? null : { node: item, decimals };
}

/** Parses one normalised answer: words-only answers (`odd`, `Evelyn`, `No`) become text; `56,144` keeps both readings. */
function parseNormalized(norm: string, opts: VerifyOptions): Parsed {
  const base = { text: norm, units: [], list: null, approx: null };
  // Words (`odd`, `Evelyn`, `no solution`) are text; two letters without a space (`ab`) stay a product.
  if (
    WORD_ANSWERS.test(norm) ||
    (/^[A-Za-z][A-Za-z' ]*$/.test(norm) &&
      /[A-Za-z]{3,}|[A-Za-z]{2} /.test(norm) &&
      !FUNCTION_WORDS.test(norm) &&
      !/^(?:[a-z] )+[a-z]$/.test(norm))
  ) {
    return { ...base, node: textNode(norm), error: null };
  }
  // A bare `{}` (an empty brace pair, as a model writes the empty set in a box) is the empty set.
  if (/^\{\s*\}$/.test(norm)) return { ...base, node: { k: 'set', items: [] }, error: null };
  const approxPrefix = APPROX_PREFIX.exec(norm);
  let src = approxPrefix ? norm.slice(approxPrefix[0].length) : norm;
  // A whole answer `1e+21` or `2.5e-7` is scientific notation (JavaScript's and Python's form of a number, as a
  // numeric gold is stringified), not 1·e + 21.
  const sci = SCIENTIFIC.exec(src);
  if (sci !== null) src = `${sci[1]}\\times 10^{${sci[2]}}`;
  const comma = commaReadings(src, opts.decimalComma);
  const main = parseText(comma === null ? src : (comma.number ?? comma.list));
  if ('error' in main) return { ...base, node: null, error: main.error };
  let list: Node | null = null;
  if (comma !== null && comma.number !== null) {
    const l = parseText(comma.list);
    if ('node' in l) list = l.node;
  }
  let approx = approximation(main.node);
  if (approxPrefix) {
    const decimals = statedDecimals(main.node);
    approx = { node: main.node, decimals: Math.max(0, decimals) };
  }
  return { ...base, node: main.node, error: null, units: main.units, list, approx };
}

function parseAnswer(raw: string, opts: VerifyOptions): Parsed {
  return parseNormalized(normalizeAnswer(raw), opts);
}

const CHOICE_LABEL = /^\(?([A-Z])\)?$/;

function choiceLabel(norm: string): string | null {
  if (norm.length > 40) return null;
  const bare = norm.replace(/\\(?:text|textbf|mathrm|mathbf)\{([^{}]*)\}/g, '$1').replace(/\s+/g, '');
  const m = CHOICE_LABEL.exec(bare);
  return m ? (m[1] as string) : null;
}

/** A list, set or tuple of two or more items: the shape that asks for the list reading of `56,144`. */
function isMulti(n: Node | null): boolean {
  return n !== null && (n.k === 'list' || n.k === 'set' || n.k === 'tuple') && n.items.length >= 2;
}

function compareParsed(g: Parsed, p: Parsed, opts: VerifyOptions): VerifyResult {
  if (g.text.length === 0) return { equal: false, reason: 'gold_empty', gold: null, pred: p.text };
  if (p.text.length === 0) return { equal: false, reason: 'pred_empty', gold: g.text, pred: null };
  if (g.text === p.text) return { equal: true, reason: 'same_text', gold: g.text, pred: p.text };
  const gl = choiceLabel(g.text);
  const pl = choiceLabel(p.text);
  if (gl !== null && pl !== null) return { equal: gl === pl, reason: gl === pl ? 'same_choice' : 'different_choice', gold: gl, pred: pl };
  if (g.node === null) return { equal: false, reason: `gold_unparseable: ${g.error}`, gold: g.text, pred: p.node ? show(p.node) : p.text };
  if (p.node === null) return { equal: false, reason: `pred_unparseable: ${p.error}`, gold: show(g.node), pred: p.text };
  // `56,144` is two quantities against a list, one number against a number.
  const gn = g.list !== null && isMulti(p.node) ? g.list : g.node;
  const pn = p.list !== null && isMulti(gn) ? p.list : p.node;
  const shown = { gold: show(gn), pred: show(pn) };
  // Where the gold carries a known unit, a pred in another known unit is a different answer (no conversion).
  if (g.units.length > 0 && p.units.length > 0) {
    const gu = [...new Set(g.units)].sort().join(', ');
    const pu = [...new Set(p.units)].sort().join(', ');
    if (gu !== pu) return { equal: false, reason: `units differ: ${gu} vs ${pu}`, ...shown };
  }
  const r = compareAnswers(gn, pn, opts);
  if (!r.equal && g.approx !== null) {
    // The gold states an approximation: the pred rounded to the gold's decimals must give it.
    const a = compareAnswers(g.approx.node, pn, { ...opts, roundTo: g.approx.decimals });
    if (a.equal) return { equal: true, reason: `approximately (${g.approx.decimals} decimals): ${a.reason}`, ...shown };
  }
  return { equal: r.equal, reason: r.reason, ...shown };
}

/** `verifyAnswer` on resolved options. */
export function gradeAnswer(gold: string, pred: string, opts: VerifyOptions): VerifyResult {
  return flagLimit(gradeAnswerRaw(gold, pred, opts));
}

function gradeAnswerRaw(gold: string, pred: string, opts: VerifyOptions): VerifyResult {
  if (gold.length > opts.maxAnswerChars) return { equal: false, reason: 'gold_too_large', gold: null, pred: null };
  if (pred.length > opts.maxAnswerChars) return { equal: false, reason: 'answer_too_large', gold: null, pred: null };
  if (opts.problem === null) return compareParsed(parseAnswer(gold, opts), parseAnswer(pred, opts), opts);
  const facts = problemFacts(opts.problem);
  opts = problemOptions(facts, opts);
  return judgeWithProblem(facts, parseAnswer(gold, opts), parseAnswer(pred, opts), opts, compareParsed, parseAnswer);
}

/** Candidate answers in a text, best first: boxes; else (with fallbacks) the text itself, anchors, math environments, last number. */
function answerCandidates(text: string, opts: VerifyOptions, asGold = false): Candidate[] {
  if (opts.fallbacks && opts.minervaSentence !== 'after_boxes') {
    // "The final answer is X. I hope it is correct." before boxes, or whichever of the two comes later.
    const m = minervaAnswer(text);
    if (m !== null && (opts.minervaSentence === 'before_boxes' || m.start > lastBoxStart(text))) return [{ text: m.content, range: null }];
  }
  const boxed = boxedAnswer(text, opts.extract);
  if (boxed !== null) return [{ text: boxed.content, range: boxed.range }];
  if (!opts.fallbacks && !asGold) return [];
  // Fallbacks read the end of a long completion only, so their cost is bounded.
  if (text.length > FALLBACK_WINDOW) text = text.slice(-FALLBACK_WINDOW);
  const out: string[] = [];
  const trimmed = text.trim();
  if ((!looksLikeProse(trimmed) || saysEmptySet(trimmed)) && trimmed.length <= opts.maxAnswerChars) out.push(trimmed);
  for (const a of anchoredAnswers(text)) out.push(a);
  // The last math environment and the last number: whichever comes later (earlier with extract: 'first') first.
  const envs = findMathEnvs(text);
  const env = (opts.extract === 'first' ? envs[0] : envs[envs.length - 1]) ?? null;
  const num = opts.lastNumber ? numberAnswer(text, opts.extract) : null;
  if (env !== null && num !== null && num.start >= env.start && num.start < env.end) out.push(env.content, num.content);
  else {
    const late = [env, num].filter((x) => x !== null).sort((a, b) => (opts.extract === 'first' ? a.start - b.start : b.start - a.start));
    for (const x of late) out.push(x.content);
  }
  return [...new Set(out)].map((t) => ({ text: t, range: null }));
}

/** Parses the first candidate that parses (remembering the first candidate if none does). */
function firstParsed(cands: Candidate[], opts: VerifyOptions): { parsed: Parsed; range: Box | null; raw: string } | null {
  let fallback: { parsed: Parsed; range: Box | null; raw: string } | null = null;
  for (const c of cands) {
    if (c.text.length > opts.maxAnswerChars) continue;
    const p = parseAnswer(c.text, opts);
    if (p.node !== null && p.text.length > 0) return { parsed: p, range: c.range, raw: c.text };
    fallback ??= { parsed: p, range: c.range, raw: c.text };
  }
  return fallback;
}

/**
 * Reads the gold answer: its boxes if it has any, else the whole string, else the fallbacks; null when its answer is
 * over `maxAnswerChars`. A gold longer than `maxCompletionChars` is read from its window, as a completion is.
 */
function goldAnswer(gold: string, opts: VerifyOptions): Parsed | null {
  gold = windowed(gold, opts).text;
  const boxed = boxedAnswer(gold, opts.extract, true);
  if (boxed !== null) return boxed.content.length > opts.maxAnswerChars ? null : parseAnswer(boxed.content, opts);
  if (gold.length > opts.maxAnswerChars && !looksLikeProse(gold.slice(0, 10_000))) return null;
  const whole = parseAnswer(gold, opts);
  if (whole.node !== null && !looksLikeProse(gold)) return whole;
  return firstParsed(answerCandidates(gold, { ...opts, fallbacks: true }, true), opts)?.parsed ?? whole;
}

/** The part of a long text that is read: its last `maxCompletionChars` characters (the first, with `extract: 'first'`), and where it starts. */
function windowed(text: string, opts: VerifyOptions): { text: string; base: number } {
  if (text.length <= opts.maxCompletionChars) return { text, base: 0 };
  if (opts.extract === 'first') return { text: text.slice(0, opts.maxCompletionChars), base: 0 };
  const base = text.length - opts.maxCompletionChars;
  return { text: text.slice(base), base };
}

const miss = (reason: string, extracted: string | null = null): RewardResult => ({ reward: 0, extracted, reason, answer: null });

/** `mathReward` on resolved options. */
export function gradeCompletion(completion: string, gold: string, opts: VerifyOptions): RewardResult {
  return flagLimit(gradeCompletionRaw(completion, gold, opts));
}

/** The unit written right after the graded answer in the completion (`\boxed{200} inches`, `is 200 inches.`), if any. */
function unitsAfterAnswer(text: string, p: { range: Box | null; raw: string }): string[] {
  const at = p.range !== null ? p.range.end : text.lastIndexOf(p.raw);
  const unit = at < 0 ? null : unitAfter(text, p.range !== null ? at : at + p.raw.length);
  return unit === null ? [] : [unit];
}

function gradeCompletionRaw(completion: string, gold: string, opts: VerifyOptions): RewardResult {
  const facts = opts.problem === null ? null : problemFacts(opts.problem);
  if (facts !== null) opts = problemOptions(facts, opts);
  let text = completion;
  for (const marker of opts.endOfTurnMarkers) {
    const at = text.indexOf(marker);
    if (at >= 0) text = text.slice(0, at);
  }
  // `base`: where `text` starts in the completion, so that the graded box is located in the completion as given.
  let base = 0;
  if (opts.reasoningDelimiters.length > 0) {
    const end = reasoningEnd(text, opts.reasoningDelimiters);
    if (end < 0) return miss('no_reasoning_end');
    text = text.slice(end);
    base = end;
  }
  // A reasoning model's answer follows its think blocks; a block that never closes was cut off and has none.
  const part = answerPart(text, opts.thinkTags);
  if ('unclosed' in part) return miss('unclosed_reasoning');
  text = part.text;
  base += part.base;
  // A long completion is read from its end (its final box), so the work is bounded without refusing it.
  const cutEnd = opts.extract === 'first' && text.length > opts.maxCompletionChars;
  const win = windowed(text, opts);
  text = win.text;
  base += win.base;
  // A final box cut off mid-answer (`\boxed{\frac{1}{2`) is no answer, not one for the fallbacks to read the digits of.
  if (!cutEnd && finalBoxUnclosed(text, opts.extract)) return miss('unclosed_box');
  if (
    opts.mode === 'choice' ||
    (opts.mode === 'auto' && choiceGold(gold, opts.choices) !== null && answersWithLetter(text, opts.choices))
  ) {
    const g = choiceAnswer(gold, opts.choices);
    const p = choiceAnswer(text, opts.choices);
    if (g === null) return miss('gold_has_no_choice', p);
    if (p === null) return miss('no_answer');
    return { reward: g === p ? 1 : 0, extracted: p, reason: g === p ? 'same_choice' : 'different_choice', answer: null };
  }
  const g = goldAnswer(gold, opts);
  if (g === null) return miss('gold_too_large');
  if (g.text.length === 0) return miss('gold_empty');
  const cands = answerCandidates(text, opts);
  if (cands.length === 0) return miss('no_answer');
  if (cands.every((c) => c.text.length > opts.maxAnswerChars)) return miss('answer_too_large');
  const p = firstParsed(cands, opts);
  if (p === null) return miss('no_answer');
  const r =
    facts === null
      ? compareParsed(g, p.parsed, opts)
      : judgeWithProblem(facts, g, p.parsed, opts, compareParsed, parseAnswer, unitsAfterAnswer(text, p));
  const answer = p.range && {
    start: p.range.start + base,
    contentStart: p.range.contentStart + base,
    contentEnd: p.range.contentEnd + base,
    end: p.range.end + base,
  };
  return { reward: r.equal ? 1 : 0, extracted: p.parsed.text, reason: r.reason, answer };
}
