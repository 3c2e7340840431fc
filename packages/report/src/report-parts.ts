/** The HTML fragments of the report page: figures, notes, data tables, summary, samples and config sections. */
import { METRIC, passAtMetricN, percent } from '@rlvr/core';
import type { ErrorBar } from './charts.js';
import { headlineRows } from './headline.js';
import { renderLegend, renderSampleCard, selectSamples, weightScale } from './heatmap.js';
import { escapeHtml, formatNumber } from './html.js';
import { RUN_FILES } from './run-dir.js';
import { metricNames } from './series.js';
import type { EvalRecord, MetricsRecord, RunData } from './run-dir.js';
import type { FlatCurve } from './series.js';
import { OUTCOMES } from './weight-stats.js';
import type { PositionBin, WeightHistogram } from './weight-stats.js';

/** The last logged value of metric `name`, with its step. */
export function lastValue(records: readonly MetricsRecord[], name: string): { step: number; value: number } | null {
  for (let i = records.length - 1; i >= 0; i--) {
    const v = records[i]![name];
    if (typeof v === 'number') return { step: records[i]!.step, value: v };
  }
  return null;
}

/** The first logged value of metric `name`, with its step. */
function firstValue(records: readonly MetricsRecord[], name: string): { step: number; value: number } | null {
  for (const r of records) {
    const v = r[name];
    if (typeof v === 'number') return { step: r.step, value: v };
  }
  return null;
}

/**
 * The summary table: steps logged; the headline `rlvr train` prints (held-out accuracy before and
 * after with the paired s.e., pass@n, greedy accuracy) from `evals.jsonl`, or, without one, the
 * first and last held-out values of `metrics.jsonl`; first, last and best reward; sample counts.
 */
export function summary(run: RunData): string {
  const rows: [string, string][] = [];
  const m = run.metrics;
  rows.push(['optimizer steps logged', m.length === 0 ? '0' : `${m.length} (steps ${m[0]!.step}–${m[m.length - 1]!.step})`]);
  if (run.evals !== null && run.evals.length > 0) {
    for (const r of headlineRows([...run.evals].sort((a, b) => a.step - b.step))) rows.push([r.label, r.value]);
  } else {
    const heldOut = metricNames(m).filter((n) => n === METRIC.accuracy || n === METRIC.accuracyGreedy || passAtMetricN(n) !== undefined);
    for (const name of heldOut) {
      const first = firstValue(m, name);
      const last = lastValue(m, name);
      if (first === null || last === null) continue;
      const label = name === METRIC.accuracy ? 'held-out accuracy' : name === METRIC.accuracyGreedy ? 'greedy accuracy' : name;
      rows.push([
        label,
        first === last || first.step === last.step
          ? `${percent(first.value)} at step ${first.step}`
          : `${percent(first.value)} at step ${first.step} -> ${percent(last.value)} at step ${last.step}`,
      ]);
    }
  }
  const reward = rewardTrend(m);
  if (reward !== null) rows.push([METRIC.rewardMean, reward]);
  if (run.samples !== null) {
    const correct = run.samples.filter((s) => s.correct).length;
    rows.push(['sampled rollouts', `${run.samples.length} (${correct} correct, ${run.samples.length - correct} wrong)`]);
  } else rows.push(['sampled rollouts', `none (no ${RUN_FILES.samples})`]);
  rows.push(['metric names in metrics.jsonl', String(metricNames(m).length)]);
  return `<table class="summary">${rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>`;
}

/** The heatmaps of the selected sample completions, with their legend; a note when there are none. */
export function samplesSection(run: RunData, opts: { maxSamples: number; sampleStep?: number | undefined }, warnings: string[]): string {
  if (run.samples === null || run.samples.length === 0) {
    const why = run.samples === null ? `no ${RUN_FILES.samples} in the run directory` : `${RUN_FILES.samples} is empty`;
    warnings.push(`no data for sample completions: ${why}`);
    return noData(`sample completions (${why})`);
  }
  const shown = selectSamples(run.samples, opts.maxSamples, opts.sampleStep);
  if (shown.length === 0) {
    const why = opts.sampleStep === undefined ? 'none selected' : `no samples at step ${opts.sampleStep}`;
    warnings.push(`no data for sample completions: ${why}`);
    return noData(`sample completions (${why})`);
  }
  const scale = weightScale(shown);
  const lead = `<p class="lead">${shown.length} of ${run.samples.length} sampled rollouts, ${opts.sampleStep === undefined ? 'from the latest steps' : `from step ${opts.sampleStep}`}, correct and wrong alternating. Each token is coloured by its weight; hover a token for its exact weight.</p>`;
  return `${lead}\n${renderLegend(scale)}\n<div class="samples">\n${shown.map((s) => renderSampleCard(s, scale)).join('\n')}\n</div>`;
}

/** The resolved config, folded. */
export function configSection(run: RunData): string {
  if (run.config === null) return noData(`config (no ${RUN_FILES.config} in the run directory)`);
  return `<details class="config"><summary>${RUN_FILES.config}</summary><pre>${escapeHtml(JSON.stringify(run.config, null, 2))}</pre></details>`;
}

/** A chart's frame: `data-chart` names it for tools and tests. */
export function figure(id: string, title: string, body: string): string {
  return `<figure class="chart" data-chart="${escapeHtml(id)}"><figcaption>${escapeHtml(title)}</figcaption>${body}</figure>`;
}

/** The note shown instead of a chart with nothing to draw. */
export function noData(what: string): string {
  return `<p class="nodata">no data for ${escapeHtml(what)}</p>`;
}

/** A caption line under a chart. */
export function note(text: string): string {
  return `<p class="note">${escapeHtml(text)}</p>`;
}

/** A data cell: the rounded value shown, the exact value in `data-value` for tools and tests. */
export function cell(x: number | null): string {
  return x === null ? '<td>–</td>' : `<td data-value="${x}">${formatNumber(x)}</td>`;
}

/** The weight histogram's numbers, folded under its chart. */
export function histogramTable(h: WeightHistogram): string {
  const head = '<tr><th>weight from</th><th>to</th><th>correct tokens</th><th>fraction</th><th>wrong tokens</th><th>fraction</th></tr>';
  const rows = h.edges.slice(0, -1).map((lo, i) => {
    const cells = [cell(lo), cell(h.edges[i + 1]!)];
    for (const o of OUTCOMES) {
      const n = h.counts[o][i]!;
      cells.push(cell(n), cell(h.totals[o] > 0 ? n / h.totals[o] : null));
    }
    return `<tr>${cells.join('')}</tr>`;
  });
  return `<details class="data"><summary>data</summary><table data-table="weight-histogram">${head}${rows.join('')}</table></details>`;
}

/** The U-shape's numbers per bin, folded under its chart. */
export function positionTable(bins: readonly PositionBin[]): string {
  const head =
    '<tr><th>bin</th><th>t/len from</th><th>to</th><th>correct mean</th><th>± s.e.</th><th>rollouts</th><th>wrong mean</th><th>± s.e.</th><th>rollouts</th></tr>';
  const rows = bins.map((b) => {
    const cells = [cell(b.bin), cell(b.lo), cell(b.hi)];
    for (const o of OUTCOMES) cells.push(cell(b.stats[o].mean), cell(b.stats[o].sem), cell(b.stats[o].rollouts));
    return `<tr data-bin="${b.bin}">${cells.join('')}</tr>`;
  });
  return `<details class="data"><summary>data</summary><table data-table="position-profile">${head}${rows.join('')}</table></details>`;
}

/**
 * Charts with nothing to draw but one value per curve (KL 0 without a penalty, a constant learning
 * rate), as one line each under their section's charts: `KL divergence: kl/approx = 0 at all 200
 * logged steps`.
 */
export const flatList = {
  item(id: string, title: string, curves: readonly FlatCurve[]): string {
    const parts = curves.map(
      (c) => `${c.name} = ${formatNumber(c.value)} ${c.points === 1 ? 'at its one logged step' : `at all ${c.points} logged steps`}`,
    );
    const named = curves.length === 1 && curves[0]!.name === title;
    return `<li data-flat="${escapeHtml(id)}">${named ? '' : `<span class="flat-title">${escapeHtml(title)}</span>: `}${escapeHtml(parts.join('; '))}</li>`;
  },
  list(items: readonly string[]): string {
    return `<ul class="flat">\n${items.join('\n')}\n</ul>`;
  },
};

/** The logged steps a reward window spans: a tenth of them, 1 to 20. */
export const rewardWindow = (steps: number): number => Math.max(1, Math.min(20, Math.floor(steps / 10)));

/**
 * `reward/mean`'s trend: the mean over the first window of logged steps against the mean over the
 * last (one step's batch mean is noisy), the window named; one step alone is given as it is.
 */
export function rewardTrend(records: readonly MetricsRecord[]): string | null {
  const points = records.flatMap((r) => {
    const v = r[METRIC.rewardMean];
    return typeof v === 'number' ? [{ step: r.step, value: v }] : [];
  });
  if (points.length === 0) return null;
  let best = points[0]!;
  for (const p of points) if (p.value > best.value) best = p;
  if (points.length === 1) return `${formatNumber(best.value)} at step ${best.step}`;
  const w = rewardWindow(points.length);
  const mean = (xs: typeof points) => xs.reduce((s, p) => s + p.value, 0) / xs.length;
  const span = (xs: typeof points) => (xs.length === 1 ? `at step ${xs[0]!.step}` : `over steps ${xs[0]!.step}–${xs[xs.length - 1]!.step}`);
  const head = points.slice(0, w);
  const tail = points.slice(-w);
  const of = w === 1 ? '' : ` (means over the first and last ${w} logged steps)`;
  return `${formatNumber(mean(head))} ${span(head)} -> ${formatNumber(mean(tail))} ${span(tail)}${of}; best step ${formatNumber(best.value)} at step ${best.step}`;
}

/** Mean and s.e. (SD over problems / sqrt(problems)) of per-problem scores. */
function meanSe(xs: readonly number[]): { mean: number; se: number } {
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
  if (xs.length < 2) return { mean, se: 0 };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
  return { mean, se: sd / Math.sqrt(xs.length) };
}

/**
 * The held-out chart's error bars from `evals.jsonl`: at each evaluation, accuracy (and greedy
 * accuracy) ± 1 s.e. over problems, the per-problem score being correct / n (greedy: 0 or 1),
 * cut to [0, 1].
 */
export function accuracyErrorBars(evals: readonly EvalRecord[]): ErrorBar[] {
  return evals.flatMap((e) => {
    const bars: ErrorBar[] = [];
    const a = meanSe(e.correct.map((c) => c / e.n));
    bars.push({ step: e.step, series: METRIC.accuracy, lo: Math.max(0, a.mean - a.se), hi: Math.min(1, a.mean + a.se) });
    if (e.greedyCorrect !== undefined) {
      const g = meanSe(e.greedyCorrect);
      bars.push({ step: e.step, series: METRIC.accuracyGreedy, lo: Math.max(0, g.mean - g.se), hi: Math.min(1, g.mean + g.se) });
    }
    return bars;
  });
}
