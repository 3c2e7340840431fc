/** The terminal summary of a credit report: the batch's counts, each method's error-line AUROC and excess mass, the paired AUROC differences. */
import { textTable } from '@rlvr/core';
import type { CreditReport, Estimate } from './schema.js';

/** `0.613 [0.588, 0.640]`: a mean and its 95% bootstrap CI ('-' where undefined). */
function withCi(e: Estimate, digits = 3): string {
  if (e.n === 0 || e.mean === null || !Number.isFinite(e.mean)) return '-';
  const ci = e.ci === null ? '' : ` [${e.ci[0].toFixed(digits)}, ${e.ci[1].toFixed(digits)}]`;
  return `${e.mean.toFixed(digits)}${ci}`;
}

/** A few lines: counts by status, one row per method, then the first method's paired AUROC differences with the others (CI, paired-t p). */
export function formatCreditTable(report: CreditReport): string {
  const { counts } = report;
  const status = Object.entries(counts.status)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  const lines = [`${counts.rollouts} rollouts (${counts.correct} correct, ${counts.wrong} wrong): ${status}`];
  const rows = report.methods.map((m) => [
    m.name,
    String(m.wrong.auroc.n),
    withCi(m.wrong.auroc),
    withCi(m.wrong.excess),
    `${m.degenerate.rollouts}`,
  ]);
  lines.push(textTable(['method', 'scored', 'error-line AUROC [95% CI]', 'excess |A| mass [95% CI]', 'degenerate'], rows));
  const first = report.methods[0]?.name;
  const pairs = report.pairs.filter((p) => p.metric === 'auroc' && (p.a === first || p.b === first));
  if (pairs.length > 0)
    lines.push(
      textTable(
        ['AUROC a - b', 'rollouts', 'difference [95% CI]', 'paired t p'],
        pairs.map((p) => [
          `${p.a} - ${p.b}`,
          String(p.difference.n),
          withCi(p.difference),
          p.test.pT === null ? '-' : p.test.pT.toPrecision(2),
        ]),
      ),
    );
  return lines.join('\n');
}
