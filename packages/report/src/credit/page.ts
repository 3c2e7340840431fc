/**
 * The credit page: one self-contained HTML file (no script, no network) with each method's error-line AUROC,
 * the metrics table with 95% bootstrap CIs, the paired differences between methods, and each method's
 * profiles (by position relative to the first error; correct rollouts by normalised position, with CI bands).
 */
import { writeFileAtomic } from '@rlvr/core';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg, type ChartSize } from '../charts.js';
import { escapeHtml, formatNumber } from '../html.js';
import { cell, figure, noData, note } from '../report-parts.js';
import { REPORT_CSS } from '../styles.js';
import { aurocSpec, correctProfileSpec, errorBinLabel, errorProfileSpec } from './charts.js';
import type { CreditReport, Estimate, MethodMetrics } from './schema.js';

const SIZE: ChartSize = { width: 470, height: 190 };

/** `mean [lo, hi]` of an estimate, its exact values in data attributes. */
function estimateCell(e: Estimate): string {
  if (e.mean === null) return '<td>–</td>';
  const ci = e.ci === null ? '' : ` <span class="ci">[${formatNumber(e.ci[0])}, ${formatNumber(e.ci[1])}]</span>`;
  const attrs = e.ci === null ? '' : ` data-lo="${e.ci[0]}" data-hi="${e.ci[1]}"`;
  return `<td data-value="${e.mean}"${attrs} data-n="${e.n}">${formatNumber(e.mean)}${ci}</td>`;
}

/** A p-value: two significant digits, an exponent below 1e-4; one that underflows double precision says so. */
function pCell(p: number | null): string {
  if (p === null) return '<td>–</td>';
  const shown = p === 0 ? '&lt; 1e-300' : p < 1e-4 ? p.toExponential(1) : formatNumber(p, 2);
  return `<td data-value="${p}">${shown}</td>`;
}

function table(id: string, head: readonly string[], rows: readonly string[]): string {
  return `<div class="scroll"><table class="metrics" data-table="${escapeHtml(id)}"><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>${rows.join('')}</table></div>`;
}

function metricsTable(methods: readonly MethodMetrics[]): string {
  const head = [
    'method',
    'scored',
    'AUROC',
    'mass share after error',
    'token share',
    'excess',
    'credit before',
    'on error line',
    'after',
    'zero |adv|',
  ];
  const rows = methods.map((m) => {
    const w = m.wrong;
    return `<tr data-method="${escapeHtml(m.name)}"><th>${escapeHtml(m.name)}</th>${cell(w.auroc.n)}${[w.auroc, w.massShare, w.tokenShare, w.excess, w.before, w.on, w.after].map(estimateCell).join('')}${cell(w.zeroMass)}</tr>`;
  });
  return table('credit-metrics', head, rows);
}

function hypothesesTable(methods: readonly MethodMetrics[]): string {
  const head = [
    'method',
    'mid-chain, wrong',
    'mid-chain, correct',
    'wrong − correct',
    'Welch p',
    'U contrast (correct)',
    'paired t p',
    'Wilcoxon p',
    'n for 80% power',
  ];
  const rows = methods.map((m) => {
    const d = m.midChain.difference;
    const diff: Estimate = { n: m.midChain.wrong.n + m.midChain.correct.n, mean: d.diff, sd: null, ci: d.ci };
    return `<tr data-method="${escapeHtml(m.name)}"><th>${escapeHtml(m.name)}</th>${estimateCell(m.midChain.wrong)}${estimateCell(m.midChain.correct)}${estimateCell(diff)}${pCell(d.welch.p)}${estimateCell(m.uShape.contrast)}${pCell(m.uShape.test.pT)}${pCell(m.uShape.test.pWilcoxon)}${cell(m.uShape.test.n80)}</tr>`;
  });
  return table('credit-hypotheses', head, rows);
}

function degenerateTable(methods: readonly MethodMetrics[]): string {
  const head = ['method', 'degenerate rollouts', 'of them scored', 'AUROC', 'mass share after error', 'token share', 'excess'];
  const rows = methods.map((m) => {
    const w = m.degenerateWrong;
    return `<tr data-method="${escapeHtml(m.name)}"><th>${escapeHtml(m.name)}</th>${cell(m.degenerate.rollouts)}${cell(m.degenerate.scored)}${[w.auroc, w.massShare, w.tokenShare, w.excess].map(estimateCell).join('')}</tr>`;
  });
  return table('credit-degenerate', head, rows);
}

function pairsTable(report: CreditReport): string {
  const head = ['a − b', 'metric', 'rollouts', 'mean difference [95% CI]', 'SD', 'paired t p', 'Wilcoxon p', 'n for 80% power'];
  const rows = report.pairs.map(
    (p) =>
      `<tr data-pair="${escapeHtml(`${p.a}|${p.b}|${p.metric}`)}"><th>${escapeHtml(`${p.a} − ${p.b}`)}</th><td>${p.metric}</td>${cell(p.difference.n)}${estimateCell(p.difference)}${cell(p.difference.sd)}${pCell(p.test.pT)}${pCell(p.test.pWilcoxon)}${cell(p.test.n80)}</tr>`,
  );
  return table('credit-pairs', head, rows);
}

function countsTable(report: CreditReport): string {
  const why: Record<string, string> = {
    scored: 'wrong, first error known, with a correct prefix',
    unlabelled: 'wrong, the labeller could not parse it',
    no_prefix: 'wrong, first error on the first line (no prefix to compare)',
    empty_error: 'wrong, the error line has no token',
    conflict: 'the verifier and the labeller disagree',
    correct: 'correct',
    empty: 'no completion token',
  };
  const rows = Object.entries(report.counts.status).map(
    ([s, n]) => `<tr data-status="${s}"><th>${escapeHtml(s)}</th>${cell(n)}<td>${escapeHtml(why[s] ?? '')}</td></tr>`,
  );
  return table('credit-counts', ['status', 'rollouts', 'meaning'], rows);
}

/** The page's options. */
export interface CreditPageOptions {
  /** the page title (default "credit maps") */
  title?: string;
  /** a line under the title: the checkpoint, the batch, the command */
  subtitle?: string;
}

/** Render `report` (from `creditMetrics` or `readCreditJson`) as one HTML page; `charts` counts the SVG charts drawn. */
export async function renderCreditPage(report: CreditReport, options: CreditPageOptions = {}): Promise<{ html: string; charts: number }> {
  let charts = 0;
  const chart = async (spec: TopLevelSpec) => {
    charts++;
    return renderSvg(spec);
  };
  const title = options.title ?? 'credit maps';
  const { counts } = report;
  const scored = counts.status.scored ?? 0;
  const summary = `${counts.rollouts} rollouts (${counts.correct} correct, ${counts.wrong} wrong); ${scored} wrong rollouts scored against their first error; ${counts.status.unlabelled ?? 0} unlabelled, ${counts.status.no_prefix ?? 0} wrong on their first line.`;
  const methods = report.methods;
  const profiles: string[] = [];
  for (const m of methods) {
    const hasError = m.errorProfile.some((b) => b.mean !== null);
    const hasCorrect = m.correctProfile.some((b) => b.mean !== null);
    profiles.push(
      figure(
        `error-profile-${m.name}`,
        `${m.name}: wrong rollouts, credit relative to the first error`,
        hasError
          ? (await chart(errorProfileSpec(m.errorProfile, SIZE))) +
              note(
                `Mean over ${m.wrong.auroc.n} scored rollouts of each rollout's mean credit per bin; the prefix and the tokens after the error line in ${(m.errorProfile.length - 1) / 2} equal parts each. Rules: 95% bootstrap CI.`,
              ) +
              `<details class="data"><summary>data</summary>${table(
                `error-profile-${m.name}`,
                ['bin', 'rollouts', 'mean credit [95% CI]'],
                m.errorProfile.map((b) => `<tr><th>${escapeHtml(errorBinLabel(b))}</th>${cell(b.n)}${estimateCell(b)}</tr>`),
              )}</details>`
          : noData(`${m.name}'s error-relative profile (no scored wrong rollout)`),
      ),
      figure(
        `correct-profile-${m.name}`,
        `${m.name}: correct rollouts, credit by position (the U-shape)`,
        hasCorrect
          ? (await chart(correctProfileSpec(m.correctProfile, SIZE))) +
              note(
                `Mean over ${m.midChain.correct.n} correct rollouts (not degenerate) of each rollout's mean credit per bin of t / T. Band: 95% bootstrap CI.`,
              ) +
              `<details class="data"><summary>data</summary>${table(
                `correct-profile-${m.name}`,
                ['t / T from', 'to', 'rollouts', 'mean credit [95% CI]'],
                m.correctProfile.map((b) => `<tr>${cell(b.lo)}${cell(b.hi)}${cell(b.n)}${estimateCell(b)}</tr>`),
              )}</details>`
          : noData(`${m.name}'s correct-rollout profile (no correct rollout)`),
      ),
    );
  }
  const [lo, hi] = report.options.middle;
  const sections = [
    [
      'summary',
      'Summary',
      `<p class="lead">${escapeHtml(summary)}</p>${countsTable(report)}${figure('auroc', 'Error-line AUROC by method', (await chart(aurocSpec(methods, SIZE))) + note('Per scored wrong rollout: the probability that a token of the error line has more credit than a token of the correct prefix (ties count 1/2); averaged over rollouts, each weighing 1. Dashed: 0.5, what uniform credit scores.'))}`,
    ],
    [
      'metrics',
      'Metrics (wrong rollouts with a known first error)',
      `<p class="lead">Mean over rollouts [95% percentile-bootstrap CI over rollouts, ${report.options.resamples} resamples, seed ${report.options.seed}]. Mass share: the share of the rollout's |advantage| on the error line and after; token share: the share of its tokens there; excess: their difference per rollout (0 for uniform credit). Degenerate rollouts (sequence advantage 0) are reported apart below.</p>${metricsTable(methods)}`,
    ],
    [
      'hypotheses',
      "The paper's hypotheses",
      `<p class="lead">Mid-chain: each rollout's mean credit at t / T in [${formatNumber(lo, 3)}, ${formatNumber(hi, 3)}), wrong rollouts (by the verifier) against correct ones; Welch's t p. U contrast: a correct rollout's mean credit outside that middle minus inside it (&gt; 0: a U), tested against 0, with the rollouts a paired t would need for 80% power at the observed contrast. p-values are two-sided and unadjusted.</p>${hypothesesTable(methods)}`,
    ],
    [
      'pairs',
      'Paired differences between methods',
      `<p class="lead">On the same rollouts (scored, not degenerate under either method): the mean of a − b [95% bootstrap CI], the SD of the per-rollout differences, the paired t test and Wilcoxon's signed-rank test (normal approximation); two-sided, unadjusted for the ${report.pairs.length} comparisons. n for 80% power: the rollouts a paired t would need to detect the observed mean difference at a two-sided 0.05 (the size that would decide it where this batch does not).</p>${pairsTable(report)}`,
    ],
    [
      'degenerate',
      'Degenerate rollouts, apart',
      `<p class="lead">Rollouts whose sequence advantage is 0 (VeriGate's degenerate groups): their credit is the advantage over its mean magnitude in the rollout.</p>${degenerateTable(methods)}`,
    ],
    ['profiles', 'Profiles', `<div class="grid">\n${profiles.join('\n')}\n</div>`],
  ] as const;
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>rlvr credit: ${escapeHtml(title)}</title>`,
    `<style>${REPORT_CSS}${CREDIT_CSS}</style>`,
    '</head>',
    '<body>',
    '<main>',
    '<header>',
    `<h1>rlvr credit: ${escapeHtml(title)}</h1>`,
    options.subtitle === undefined ? '' : `<p class="sub">${escapeHtml(options.subtitle)}</p>`,
    `<nav>${sections.map(([id, t]) => `<a href="#${id}">${escapeHtml(t)}</a>`).join('')}</nav>`,
    '</header>',
    ...sections.map(([id, t, body]) => `<section id="${id}">\n<h2>${escapeHtml(t)}</h2>\n${body}\n</section>`),
    '<footer>Generated by @rlvr/report (renderCreditPage). Self-contained: no scripts, no network.</footer>',
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return { html, charts };
}

/** `renderCreditPage`, written to `path` all or nothing. */
export async function writeCreditPage(
  path: string,
  report: CreditReport,
  options: CreditPageOptions = {},
): Promise<{ bytes: number; charts: number }> {
  const { html, charts } = await renderCreditPage(report, options);
  await writeFileAtomic(path, html);
  return { bytes: Buffer.byteLength(html), charts };
}

const CREDIT_CSS = `
.scroll { overflow-x: auto; }
table.metrics { border-collapse: collapse; margin: 8px 0 14px; font-variant-numeric: tabular-nums; font-size: 13px; }
table.metrics th, table.metrics td { padding: 3px 12px 3px 0; text-align: right; border-bottom: 1px solid #f0f0f0; white-space: nowrap; }
table.metrics th { font-weight: 500; color: var(--muted); }
table.metrics tr > th:first-child { text-align: left; color: var(--ink); }
table.metrics .ci { color: var(--muted); font-size: 12px; }
`;
