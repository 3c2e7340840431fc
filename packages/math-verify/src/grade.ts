/**
 * The grading itself, on resolved options: extraction from a completion, parsing, comparison. Pure, synchronous and
 * bounded; never throws on any string. Imports no zod, so worker threads that load it start quickly; the public
 * entry points in verify.ts validate options first.
 */
import type { Box } from '@rlvr/core';
import { type Node, show } from './ast.js';
import { compareAnswers } from './compare.js';
import { FALLBACK_WINDOW, anchoredAnswers, boxedAnswer, choiceAnswer, findMathEnvs, looksLikeProse, lastBoxStart, minervaAnswer, numberAnswer, reasoningEnd } from './extract.js';
import { decimalCommaForm, normalizeAnswer } from './normalize.js';
import type { VerifyOptions } from './options.js';
import { parseAnswerText, textNode } from './parse.js';

/** The verdict on one pair, with the parsed forms so a user can see why. */
export interface VerifyResult {
  equal: boolean;
  /** Why: `exact`, `numeric`, `symbolic (sampled)`, `set`, `pred_unparseable`, `timeout`, ... */
  reason: string;
  /** The gold answer as it was compared (parsed form, or the normalised text). */
  gold: string | null;
  /** The predicted answer as it was compared. */
  pred: string | null;
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
}

/** A candidate answer: its text, and its box in the completion when it came from one. */
interface Candidate {
  text: string;
  range: Box | null;
}

interface Parsed {
  text: string;
  node: Node | null;
  error: string | null;
}

const FUNCTION_WORDS = /^(?:sin|cos|tan|sec|csc|cot|log|ln|exp|sqrt|pi)$/;

/** Parses one normalised answer; words-only answers (`odd`, `Evelyn`) become text. */
function parseNormalized(norm: string): Parsed {
  const comma = decimalCommaForm(norm);
  const src = comma ?? norm;
  // Words (`odd`, `Evelyn`, `no solution`) are text; two letters without a space (`ab`) stay a product.
  if (/^[A-Za-z][A-Za-z' ]*$/.test(src) && /[A-Za-z]{3,}|[A-Za-z]{2} /.test(src) && !FUNCTION_WORDS.test(src) && !/^(?:[a-z] )+[a-z]$/.test(src)) {
    return { text: norm, node: textNode(src), error: null };
  }
  try {
    return { text: norm, node: parseAnswerText(src), error: null };
  } catch (e) {
    return { text: norm, node: null, error: e instanceof Error ? e.message : String(e) };
  }
}

function parseAnswer(raw: string): Parsed {
  return parseNormalized(normalizeAnswer(raw));
}

const CHOICE_LABEL = /^\(?([A-Z])\)?$/;

function choiceLabel(norm: string): string | null {
  const bare = norm.replace(/\\(?:text|textbf|mathrm|mathbf)\{([^{}]*)\}/g, '$1').replace(/\s+/g, '');
  const m = CHOICE_LABEL.exec(bare);
  return m ? (m[1] as string) : null;
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
  const r = compareAnswers(g.node, p.node, opts);
  return { equal: r.equal, reason: r.reason, gold: show(g.node), pred: show(p.node) };
}

/** `verifyAnswer` on resolved options. */
export function gradeAnswer(gold: string, pred: string, opts: VerifyOptions): VerifyResult {
  if (gold.length > opts.maxAnswerChars) return { equal: false, reason: 'gold_too_large', gold: null, pred: null };
  if (pred.length > opts.maxAnswerChars) return { equal: false, reason: 'answer_too_large', gold: null, pred: null };
  return compareParsed(parseAnswer(gold), parseAnswer(pred), opts);
}

/** Candidate answers in a text, best first: boxes; else (with fallbacks) the text itself, anchors, math environments, last number. */
export function answerCandidates(text: string, opts: VerifyOptions, asGold = false): Candidate[] {
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
  if (!looksLikeProse(trimmed) && trimmed.length <= opts.maxAnswerChars) out.push(trimmed);
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
function firstParsed(cands: Candidate[], opts: VerifyOptions): { parsed: Parsed; range: Box | null } | null {
  let fallback: { parsed: Parsed; range: Box | null } | null = null;
  for (const c of cands) {
    if (c.text.length > opts.maxAnswerChars) continue;
    const p = parseAnswer(c.text);
    if (p.node !== null && p.text.length > 0) return { parsed: p, range: c.range };
    fallback ??= { parsed: p, range: c.range };
  }
  return fallback;
}

/** Reads the gold answer: its boxes if it has any, else the whole string, else the fallbacks; null when too large. */
export function goldAnswer(gold: string, opts: VerifyOptions): Parsed | null {
  const boxed = boxedAnswer(gold, opts.extract, true);
  if (boxed !== null) return boxed.content.length > opts.maxAnswerChars ? null : parseAnswer(boxed.content);
  if (gold.length > opts.maxAnswerChars && !looksLikeProse(gold.slice(0, 10_000))) return null;
  const whole = parseAnswer(gold);
  if (whole.node !== null && !looksLikeProse(gold)) return whole;
  return firstParsed(answerCandidates(gold, { ...opts, fallbacks: true }, true), opts)?.parsed ?? whole;
}

const miss = (reason: string, extracted: string | null = null): RewardResult => ({ reward: 0, extracted, reason, answer: null });

/** `mathReward` on resolved options. */
export function gradeCompletion(completion: string, gold: string, opts: VerifyOptions): RewardResult {
  if (completion.length > opts.maxCompletionChars) return miss('completion_too_large');
  if (gold.length > opts.maxCompletionChars) return miss('gold_too_large');
  let text = completion;
  for (const marker of opts.endOfTurnMarkers) {
    const at = text.indexOf(marker);
    if (at >= 0) text = text.slice(0, at);
  }
  // Offsets of `text` in the completion (only a prefix is ever cut off), so the graded box is located in the completion.
  let base = 0;
  if (opts.reasoningDelimiters.length > 0) {
    const end = reasoningEnd(text, opts.reasoningDelimiters);
    if (end < 0) return miss('no_reasoning_end');
    text = text.slice(end);
    base = end;
  }
  if (opts.mode === 'choice') {
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
  const r = compareParsed(g, p.parsed, opts);
  const answer = p.range && { start: p.range.start + base, contentStart: p.range.contentStart + base, contentEnd: p.range.contentEnd + base, end: p.range.end + base };
  return { reward: r.equal ? 1 : 0, extracted: p.parsed.text, reason: r.reason, answer };
}
