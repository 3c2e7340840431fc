import { percent, textTable } from '@rlvr/core';
import type { EvalMetrics } from './score.js';

/** A row of the table: a dataset's name and metrics. */
export interface TableRow extends EvalMetrics {
  name: string;
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
  return textTable(head, rows, { rule: false });
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
