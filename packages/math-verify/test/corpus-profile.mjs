// How each source of the held-out corpus calls its grader, translated to @rlvr/math-verify options.
// Shared by the agreement test (test/corpus.test.ts) and the benchmark (tools/bench/math-verify).
// The settings come from the source's grader configuration recorded in each row's `note`, never from a row's
// expected verdict: a whole source gets one profile.
import { readFileSync } from 'node:fs';

/** Reads the JSONL corpus: `{source, gold, pred, expected, note}` per line. */
export function loadCorpus(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l));
}

/** Short source name: `huggingface/Math-Verify:tests/test_all.py` -> `Math-Verify/test_all`. */
export function sourceName(source) {
  const [repo, path] = source.split(':');
  const file = path
    .split('/')
    .pop()
    .replace(/\.(py|ts)$/, '');
  return `${repo.split('/')[1]}/${file}`;
}

/**
 * The call that reproduces the source's grader: `reward` extracts from a completion (pred) and a gold that may
 * itself be a solution; `answer` compares two already-extracted answers.
 */
/** Math-Verify's `verify(float_rounding=N)` (lighteval: `precision=N`): both sides rounded to N decimals when one is inexact. */
function mathVerifyRounding(note) {
  const m = /float_rounding=(\d+)|precision=(\d+)/.exec(note);
  return m ? Number(m[1] ?? m[2]) : 6;
}

export function profileFor(row) {
  const repo = row.source.split(':')[0];
  const note = row.note;
  switch (repo) {
    case 'huggingface/Math-Verify':
      // parse() on both sides with LaTeX + expression extraction (anchor-free): our eval fallbacks. Its number
      // grammar reads a decimal comma (`1,22`), and verify() rounds to float_rounding digits.
      return {
        call: 'reward',
        options: {
          fallbacks: true,
          lastNumber: !note.includes('LaTeX-only'),
          minervaSentence: note.includes('library defaults') ? 'before_boxes' : 'by_position',
          allowSetRelationComp: note.includes('allow_set_relation_comp=True'),
          strict: !note.includes('strict=False'),
          decimalComma: true,
          roundTo: mathVerifyRounding(note),
        },
      };
    case 'huggingface/lighteval':
      return note.includes('MCQ-letter')
        ? { call: 'reward', options: { mode: 'choice' } }
        : { call: 'reward', options: { fallbacks: true, decimalComma: true, roundTo: mathVerifyRounding(note) } };
    case 'NVIDIA-NeMo/RL':
      // Gold is wrapped in \boxed{}; pred is parsed with [Expr, Latex] extraction (anchor-free); Math-Verify's rounding.
      return {
        call: 'reward',
        options: { fallbacks: true, roundTo: mathVerifyRounding(note) },
        wrapGold: !note.includes('multichoice') && !note.includes('MathMultiReward'),
      };
    case 'huggingface/trl': {
      const m = /reasoning_delimiters=\[(.*?)\]/.exec(note);
      if (note.includes('reasoning_accuracy_reward')) {
        const delims = m ? [...m[1].matchAll(/'([^']+)'/g)].map((x) => x[1]) : ['</think>'];
        return { call: 'reward', options: { reasoningDelimiters: delims } };
      }
      return { call: 'reward', options: {} };
    }
    case 'huggingface/open-r1':
      return { call: 'reward', options: {} };
    case 'volcengine/verl':
      return { call: 'reward', options: { fallbacks: true } };
    case 'hendrycks/math':
      // String equality after normalisation: a comma list keeps its order.
      return { call: 'answer', options: { listOrder: 'ordered' } };
    case 'MARIO-Math-Reasoning/MARIO_EVAL':
    case 'QwenLM/Qwen2.5-Math':
      // Expression-level, with the ToRA-lineage numeric tolerance (rel_tol 1e-4) and decimals read as rounded
      // (Qwen rounds matrix entries to 3 places; MARIO accepts 1.414 for sqrt 2).
      return { call: 'answer', options: { relTol: 1e-4, roundedDecimals: true } };
    default:
      // NeMo-Skills, compute-engine: expression-level comparisons.
      return { call: 'answer', options: {} };
  }
}

/** Runs one row through the API object `api` ({ mathReward, verifyAnswer }); returns the verdict and reason. */
export function runRow(api, row, profile = profileFor(row)) {
  if (profile.call === 'answer') {
    const r = api.verifyAnswer(row.gold, row.pred, profile.options);
    return { got: r.equal, reason: r.reason, gold: r.gold, pred: r.pred };
  }
  const gold = profile.wrapGold ? `\\boxed{${row.gold}}` : row.gold;
  const r = api.mathReward(row.pred, gold, profile.options);
  return { got: r.reward === 1, reason: r.reason, gold, pred: r.extracted };
}

/** Per-source agreement table rows: `{source, cases, agree}` plus a total. */
export function agreementTable(api, rows) {
  const by = new Map();
  const misses = [];
  for (const [i, row] of rows.entries()) {
    const r = runRow(api, row);
    const key = sourceName(row.source);
    const e = by.get(key) ?? { source: key, cases: 0, agree: 0 };
    e.cases++;
    if (r.got === row.expected) e.agree++;
    else misses.push({ index: i, source: key, expected: row.expected, ...r, goldRaw: row.gold, predRaw: row.pred });
    by.set(key, e);
  }
  const table = [...by.values()];
  const total = { source: 'all', cases: rows.length, agree: table.reduce((s, e) => s + e.agree, 0) };
  return { table, total, misses };
}

/**
 * One setting for every row, no per-source profile: every row is `mathReward(pred, gold, UNIFORM_OPTIONS)`. The eval
 * fallbacks (the corpus has bare answers and prose), decimal commas and rounded decimals (Math-Verify's number
 * grammar and float rounding), and choice letters where the gold is a choice.
 */
export const UNIFORM_OPTIONS = { fallbacks: true, decimalComma: true, roundedDecimals: true, mode: 'auto' };

/** Agreement of the uniform setting: `{ agree, cases, misses }`. */
export function uniformAgreement(api, rows) {
  const misses = [];
  let agree = 0;
  for (const [i, row] of rows.entries()) {
    const got = api.mathReward(row.pred, row.gold, UNIFORM_OPTIONS).reward === 1;
    if (got === row.expected) agree++;
    else misses.push({ index: i, source: sourceName(row.source), expected: row.expected });
  }
  return { agree, cases: rows.length, misses };
}
