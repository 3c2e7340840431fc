import { findBoxes } from '@rlvr/core';
import { verifyAnswer } from '@rlvr/math-verify';
import type { Scaffold } from '@rlvr/tasks';
import { MAIN_LABEL, subLabel } from './scaffold.js';

/** What a scaffolded completion answered: each sub-answer (null where none) and the main answer. */
export interface LabelledAnswers {
  /** [m] the box after the last `[SUB-k ANSWER]` label, or null */
  sub: (string | null)[];
  /** the box after the last `[MAIN ANSWER]` label; without that label, the last box after the sub-answers; or null */
  main: string | null;
}

/** The content of the first box at or after `from` in `text`, with where it ends; null when there is none. */
function firstBox(text: string, from: number): { content: string; end: number } | null {
  const box = findBoxes(text.slice(from))[0];
  return box === undefined ? null : { content: text.slice(from + box.contentStart, from + box.contentEnd), end: from + box.end };
}

/**
 * Read a scaffolded completion: sub-answer k is the first box after the last `[SUB-k ANSWER]`; the main
 * answer the first box after the last `[MAIN ANSWER]`, else (no main label) the last box after the
 * last sub-answer read (the whole text when none was), as the SCOPE-RL reproduction reads them.
 */
export function readLabelled(text: string, m: number): LabelledAnswers {
  let tail = 0;
  const sub = Array.from({ length: m }, (_, i) => {
    const at = text.lastIndexOf(subLabel(i + 1));
    if (at < 0) return null;
    const box = firstBox(text, at + subLabel(i + 1).length);
    if (box !== null) tail = Math.max(tail, box.end);
    return box?.content ?? null;
  });
  const at = text.lastIndexOf(MAIN_LABEL);
  if (at >= 0) return { sub, main: firstBox(text, at + MAIN_LABEL.length)?.content ?? null };
  const boxes = findBoxes(text.slice(tail));
  const last = boxes.at(-1);
  return { sub, main: last === undefined ? null : text.slice(tail + last.contentStart, tail + last.contentEnd) };
}

/** The grade of a scaffolded completion. */
export interface ScaffoldGrade {
  /** beta L / m + (1 - beta) 1[L = m] 1[main correct] */
  reward: number;
  /** L: the longest prefix of correct sub-answers */
  prefix: number;
  mainCorrect: boolean;
}

/**
 * SCOPE-RL's reward of a completion on the scaffolded prompt: with m sub-questions and L the number
 * of leading sub-answers that are all correct, beta L / m plus (1 - beta) when every sub-answer and
 * the main answer are correct. The main answer counts only after a fully correct chain. Answers are
 * compared with `@rlvr/math-verify` (`problem`: the question, for its units and rounding).
 */
export function scaffoldReward(text: string, scaffold: Scaffold, answer: string, beta: number, problem?: string): ScaffoldGrade {
  const m = scaffold.subAnswers.length;
  const read = readLabelled(text, m);
  const opts = problem === undefined ? undefined : { problem };
  const ok = (gold: string, pred: string | null) => pred !== null && verifyAnswer(gold, pred, opts).equal;
  let prefix = 0;
  while (prefix < m && ok(scaffold.subAnswers[prefix]!, read.sub[prefix]!)) prefix++;
  const mainCorrect = ok(answer, read.main);
  const full = prefix === m && mainCorrect ? 1 : 0;
  return { reward: m === 0 ? (mainCorrect ? 1 : 0) : (beta * prefix) / m + (1 - beta) * full, prefix, mainCorrect };
}
