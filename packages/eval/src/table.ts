import { percent, textTable } from '@rlvr/core';
import type { EvalMetrics } from './score.js';
import type { ProblemMean, StepQuality } from './step-quality.js';

/** A row of the table: a dataset's name and metrics (and its Step-Quality metrics, where its problems have chains). */
export interface TableRow extends EvalMetrics {
  name: string;
  stepQuality?: StepQuality;
}

const pm = (m: ProblemMean, f: (x: number) => string): string =>
  m.mean === null ? '-' : m.se === null ? f(m.mean) : `${f(m.mean)} ± ${f(m.se)}`;
const frac = (x: number) => x.toFixed(2);
const tokensPerSolved = (q: StepQuality): string => {
  const t = q.tokensPerSolved;
  return t.value === null ? '-' : t.se === null ? t.value.toFixed(1) : `${t.value.toFixed(1)} ± ${t.se.toFixed(1)}`;
};

/** One line of a dataset's Step-Quality metrics, for the log. */
export function stepQualityLine(q: StepQuality): string {
  return `step quality over ${q.problems} problems with chains (mean ± SE over problems): useful-step density ${pm(q.usefulDensity, percent)}, first error found in ${pm(q.localised, percent)} of ${q.wrong} wrong completions, at step fraction ${pm(q.errorAt, frac)}, ${tokensPerSolved(q)} tokens per solved problem`;
}

/**
 * The Step-Quality table, one row per dataset whose problems have chains; '' when none has.
 * Each cell is mean ± SE over problems (see `StepQuality`).
 *
 * ```
 * step quality   problems  useful steps  wrong  first error found  first error at  tokens/solved
 * long-chain           20  62.1% ± 3.0%     31      90.3% ± 5.0%     0.41 ± 0.05   123.4 ± 10.2
 * ```
 */
function formatStepQualityTable(datasets: readonly TableRow[]): string {
  const rows = datasets.flatMap((d) => {
    const q = d.stepQuality;
    if (q === undefined) return [];
    return [
      [
        d.name,
        String(q.problems),
        pm(q.usefulDensity, percent),
        String(q.wrong),
        pm(q.localised, percent),
        pm(q.errorAt, frac),
        tokensPerSolved(q),
      ],
    ];
  });
  if (rows.length === 0) return '';
  const head = ['step quality', 'problems', 'useful steps', 'wrong', 'first error found', 'first error at', 'tokens/solved'];
  return textTable(head, rows, { rule: false });
}

/**
 * The plain-text result table: one row per dataset, then `average` (the plain mean over
 * datasets) and, with several datasets, `weighted` (weighted by problems). Rates in percent
 * with one decimal, mean tokens with one decimal; columns right-aligned.
 *
 * ```
 * dataset    problems  n  mean acc  pass@1  pass@3  mean tokens  truncated
 * math500         500  3     45.2%   45.2%   60.1%        512.3       1.2%
 * ```
 *
 * Then, after a blank line, the Step-Quality table (`formatStepQualityTable`) when a dataset has one.
 */
export function formatEvalTable(result: { datasets: readonly TableRow[]; average: EvalMetrics; weighted: EvalMetrics }): string {
  const n = result.datasets[0]?.n ?? result.average.n;
  // with n = 1, pass@n is pass@1: one column
  const row = (name: string, m: EvalMetrics) => [
    name,
    String(m.problems),
    String(m.n),
    percent(m.accuracy),
    percent(m.passAt1),
    ...(n > 1 ? [percent(m.passAtN)] : []),
    m.meanTokens.toFixed(1),
    percent(m.truncated),
  ];
  const head = ['dataset', 'problems', 'n', 'mean acc', 'pass@1', ...(n > 1 ? [`pass@${n}`] : []), 'mean tokens', 'truncated'];
  const rows = [...result.datasets.map((d) => row(d.name, d)), row('average', result.average)];
  if (result.datasets.length > 1) rows.push(row('weighted', result.weighted));
  const table = textTable(head, rows, { rule: false });
  const steps = formatStepQualityTable(result.datasets);
  return steps === '' ? table : `${table}\n\n${steps}`;
}

/** The result as JSON: indented, with arrays of numbers (per-problem counts, lines) on one line. */
export function formatEvalJson(result: unknown): string {
  return (
    JSON.stringify(result, null, 2).replace(
      /\[\s*(-?\d[\d.eE+-]*(?:,\s*-?\d[\d.eE+-]*)*)\s*\]/g,
      (_, inner: string) => `[${inner.split(/,\s*/).join(', ')}]`,
    ) + '\n'
  );
}
