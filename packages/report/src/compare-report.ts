/**
 * `rlvr report OUT` on a comparison directory (`rlvr compare --out OUT`): one page with the comparison's
 * table and verdicts as `rlvr compare` printed them, and, after `--tune`, the learning-rate tuning: one
 * table per row (each rate's validation accuracy per tuning seed, mean and SD) and a chart of the curves.
 */
import { basename, resolve } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { SERIES_COLORS, renderSvg } from './charts.js';
import { formatCompare } from './compare-format.js';
import type { CompareRun, CompareTable } from './compare-stats.js';
import { COMPARE_FILE } from './compare-stats.js';
import { TuneRecordSchema, formatTune, rateLabel } from './compare-tune.js';
import type { TuneRecord } from './compare-tune.js';
import { escapeHtml, reportPage } from './html.js';
import { figure, note } from './report-parts.js';
import type { RenderedReport } from './report.js';

/** compare.json as `rlvr compare` writes it: the table's fields, the runs, and `tune` after `--tune`. */
type CompareFile = CompareTable & { steps: number; seeds: number[]; runs: CompareRun[]; tune?: unknown };

/** The page of a comparison directory `dir` whose compare.json holds `file`. */
export async function renderCompareReport(
  file: CompareFile,
  dir: string,
  title?: string,
  generatedAt = new Date(),
): Promise<RenderedReport> {
  const warnings: string[] = [];
  let charts = 0;
  const sections = [
    [
      'comparison',
      'Comparison',
      `<pre style="white-space: pre-wrap">${escapeHtml(formatCompare(file, { steps: file.steps, seeds: file.seeds, runs: file.runs }))}</pre>`,
    ],
  ];
  if (file.tune !== undefined) {
    const tune = TuneRecordSchema.parse(file.tune);
    const svg = await renderSvg(tuneSpec(tune), (m) => warnings.push(`chart: ${m}`));
    charts++;
    const caption = `Final validation accuracy against the learning rate (log scale), mean over the ${tune.seeds.length} tuning seed(s), bars ±1 SD over seeds; the ringed point is each row's chosen rate.`;
    sections.push([
      'tune',
      'Learning rates',
      [
        figure('tune', 'Tuning curves', svg + note(caption)),
        `<pre style="white-space: pre-wrap">${escapeHtml(formatTune(tune))}</pre>`,
        ...tune.rows.map((r) => tuneTable(r, tune)),
      ].join('\n'),
    ]);
  }
  const name = title ?? basename(resolve(dir));
  const html = reportPage({
    name,
    sub: `${resolve(dir)} (${COMPARE_FILE}) · generated ${generatedAt.toISOString()}`,
    nav: sections.map(([id, title]) => ({ id, title })),
    body: sections.map(([id, t, body]) => `<section id="${id}">\n<h2>${t}</h2>\n${body}\n</section>`),
  });
  return { html, charts, warnings };
}

/** One row's tuning: a line per rate, a column per tuning seed, then mean and SD (percent). */
function tuneTable(r: TuneRecord['rows'][number], t: TuneRecord): string {
  const pct = (x: number | null) => (x === null ? '<td>–</td>' : `<td data-value="${x}">${(100 * x).toFixed(1)}</td>`);
  const head = `<tr><th>lr</th>${t.seeds.map((s) => `<th>seed ${s}</th>`).join('')}<th>mean</th><th>SD</th></tr>`;
  const lines = r.points.map(
    (p) =>
      `<tr${p.lr === r.chosen ? ' class="chosen"' : ''}><td>${rateLabel(p.lr)}${p.lr === r.chosen ? ' (chosen)' : ''}${r.widened.includes(p.lr) ? ' (widened)' : ''}</td>${p.accuracy.map(pct).join('')}${pct(p.mean)}${pct(p.sd)}</tr>`,
  );
  const edge = r.edge === null ? '' : `; the choice is at the ${r.edge} edge of the grid (widening capped at ${t.maxWiden})`;
  return `<table class="data" data-tune="${escapeHtml(r.estimator)}"><caption>${escapeHtml(r.estimator)}: final validation accuracy (%), chosen lr ${rateLabel(r.chosen)}${escapeHtml(edge)}</caption>${head}${lines.join('')}</table>`;
}

/** Validation accuracy against the rate (log x), one line per row with ±1 SD bars and its chosen rate ringed. */
function tuneSpec(t: TuneRecord): TopLevelSpec {
  const rows = t.rows.map((r) => r.estimator);
  const values = t.rows.flatMap((r) =>
    r.points.map((p) => ({
      row: r.estimator,
      lr: p.lr,
      mean: p.mean,
      lo: p.mean - (p.sd ?? 0),
      hi: p.mean + (p.sd ?? 0),
      chosen: p.lr === r.chosen,
    })),
  );
  const color = {
    field: 'row',
    type: 'nominal',
    sort: rows,
    scale: { domain: rows, range: rows.map((_, i) => SERIES_COLORS[i % SERIES_COLORS.length]!) },
  } as const;
  const x = { field: 'lr', type: 'quantitative', scale: { type: 'log' }, title: 'learning rate', axis: { format: '.0e' } } as const;
  return {
    width: 470,
    height: 220,
    data: { values },
    encoding: { x, color },
    layer: [
      {
        mark: { type: 'line', point: { filled: true, size: 30 } },
        encoding: {
          y: { field: 'mean', type: 'quantitative', title: 'validation accuracy', axis: { format: '~%' }, scale: { zero: false } },
        },
      },
      { mark: { type: 'rule' }, encoding: { y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' } } },
      {
        transform: [{ filter: 'datum.chosen' }],
        mark: { type: 'point', size: 160, strokeWidth: 2 },
        encoding: { y: { field: 'mean', type: 'quantitative' } },
      },
    ],
  } as TopLevelSpec;
}
