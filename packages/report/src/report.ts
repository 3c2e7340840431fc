/**
 * `rlvr report`: one self-contained HTML file for a run directory. Charts are
 * SVG rendered here, in Node; the page has no script and loads nothing.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { METRIC, METRIC_FAMILY, assertWritable, percent, writeFileAtomic } from '@rlvr/core';
import type { TopLevelSpec } from 'vega-lite';
import { ALL_ROLLOUTS_COLOR, OUTCOME_COLORS, SERIES_COLORS, lineSpec, renderSvg, rewardSpec, withErrorBars } from './charts.js';
import type { ChartSize, RewardSeries } from './charts.js';
import { renderCompareReport } from './compare-report.js';
import { COMPARE_FILE } from './compare-stats.js';
import { ReportError } from './errors.js';
import { parseReportOptions } from './options.js';
import type { ReportOptions, ReportOptionsResolved } from './options.js';
import { reportPage } from './html.js';
import { outcomeOf, planMetricCharts } from './metric-plan.js';
import type { MetricChart, SectionId } from './metric-plan.js';
import { RUN_FILES, readRunDir } from './run-dir.js';
import type { MetricsRecord, RunData } from './run-dir.js';
import { accuracyErrorBars, configSection, figure, flatList, lastValue, noData, note, samplesSection, summary } from './report-parts.js';
import { downsample, flatCurves, mergeSteps, metricNames, movingAverage, seriesPoints, smoothingWindow } from './series.js';
import { checkpointFigures, tokenWeightFigures } from './weight-figures.js';

type Resolved = ReportOptionsResolved;

/** What `renderReport` produced. */
export interface RenderedReport {
  html: string;
  /** Charts drawn (each a non-empty `<svg>`). */
  charts: number;
  /** Things a reader should know (missing files, empty charts), one line each. */
  warnings: string[];
}

/** What `writeReport` wrote. */
export interface ReportResult extends Omit<RenderedReport, 'html'> {
  path: string;
  bytes: number;
}

const SIZE: ChartSize = { width: 470, height: 190 };

const SECTIONS: readonly { id: SectionId | 'summary' | 'samples' | 'config'; title: string }[] = [
  { id: 'summary', title: 'Summary' },
  { id: 'reward', title: 'Reward and accuracy' },
  { id: 'optimisation', title: 'Optimisation' },
  { id: 'rollouts', title: 'Rollouts' },
  { id: 'weights', title: 'Token weights' },
  { id: 'samples', title: 'Sample completions' },
  { id: 'other', title: 'Other metrics' },
  { id: 'config', title: 'Config' },
];

/** Charts every report shows, with a "no data" note when the run did not log them. */
const EXPECTED: readonly { id: string; section: SectionId; title: string; what: string }[] = [
  { id: 'reward', section: 'reward', title: 'Reward (mean ± std over rollouts)', what: METRIC.rewardMean },
  { id: 'accuracy', section: 'reward', title: 'Held-out accuracy', what: METRIC.accuracy },
  { id: 'loss', section: 'optimisation', title: 'Loss', what: `${METRIC_FAMILY.loss}*` },
  { id: 'kl', section: 'optimisation', title: 'KL divergence', what: `${METRIC_FAMILY.kl}*` },
  { id: 'entropy', section: 'optimisation', title: 'Entropy', what: METRIC.entropy },
  { id: 'clip', section: 'optimisation', title: 'Clipped token fractions', what: `${METRIC_FAMILY.clip}*` },
];

/**
 * Read `runDir`, render its report and write it atomically. Returns where, how big, and any
 * warnings. A `metrics.jsonl` without a record is `ReportError('no_metrics')`: a page of "no data"
 * notes would only hide that the run logged nothing.
 */
export async function writeReport(runDir: string, options: ReportOptions = {}): Promise<ReportResult> {
  const opts = parseReportOptions(options);
  const path = opts.out ?? join(runDir, 'report.html');
  // a comparison directory (rlvr compare --out): its table, verdicts and learning-rate tuning
  const compare = join(runDir, COMPARE_FILE);
  if (!existsSync(join(runDir, RUN_FILES.metrics)) && existsSync(compare)) {
    let file;
    try {
      file = JSON.parse(await readFile(compare, 'utf8'));
    } catch (err) {
      throw new ReportError('invalid_record', `not a compare.json: ${(err as Error).message}`, { file: compare }, { cause: err });
    }
    await assertWritable(path);
    const { html, charts, warnings } = await renderCompareReport(file, runDir, opts.title);
    await writeFileAtomic(path, html);
    return { path, bytes: Buffer.byteLength(html), charts, warnings };
  }
  const run = await readRunDir(runDir);
  if (run.metrics.length === 0)
    throw new ReportError('no_metrics', 'no records: the run has logged nothing to report yet', { file: join(runDir, RUN_FILES.metrics) });
  await assertWritable(path);
  const { html, charts, warnings } = await renderReport(run, opts);
  await writeFileAtomic(path, html);
  return { path, bytes: Buffer.byteLength(html), charts, warnings };
}

/** Render the report of an already-read run to one HTML string. */
export async function renderReport(raw: RunData, options: ReportOptions = {}, generatedAt: Date = new Date()): Promise<RenderedReport> {
  const opts = parseReportOptions(options);
  const warnings: string[] = [];
  const merged = mergeSteps(raw.metrics);
  if (merged.repeated > 0) {
    warnings.push(
      `${RUN_FILES.metrics}: ${merged.repeated} step(s) logged on more than one line (separate eval lines, or a resumed run); merged, later values winning`,
    );
  }
  const run: RunData = { ...raw, metrics: merged.records };
  let charts = 0;
  const chart = async (spec: TopLevelSpec): Promise<string> => {
    const svg = await renderSvg(spec, (m) => warnings.push(`chart: ${m}`));
    charts++;
    return svg;
  };

  const bySection = new Map<string, string[]>();
  const add = (section: string, html: string): void => {
    bySection.set(section, [...(bySection.get(section) ?? []), html]);
  };

  // Metric curves, with a "no data" placeholder, in its fixed place, for each expected chart the run did not log.
  // A chart whose every curve kept one value becomes a line of text under its section's charts.
  const flat = new Map<string, string[]>();
  const plan = planMetricCharts(metricNames(run.metrics));
  for (const c of orderCharts(plan)) {
    if ('what' in c) {
      add(c.section, figure(c.id, c.title, noData(`${c.what} (not in ${RUN_FILES.metrics})`)));
      warnings.push(`no data for ${c.what} in ${RUN_FILES.metrics}`);
      continue;
    }
    const constant = flatCurves(run.metrics, c.band === undefined ? c.metrics : [...c.metrics, c.band]);
    if (constant !== null) flat.set(c.section, [...(flat.get(c.section) ?? []), flatList.item(c.id, c.title, constant)]);
    else add(c.section, figure(c.id, c.title, await metricFigureBody(c, run, opts, chart)));
  }

  // Token weights from samples.jsonl first in their section, then the weights/* metric charts.
  const weightFigures = [
    ...(await tokenWeightFigures(run, opts, { chart, size: SIZE, warnings })),
    ...(await checkpointFigures(run, opts, { chart, size: SIZE, warnings })),
  ];
  bySection.set('weights', [...weightFigures, ...(bySection.get('weights') ?? [])]);

  const body: string[] = [];
  for (const s of SECTIONS) {
    let content: string;
    if (s.id === 'summary') content = summary(run);
    else if (s.id === 'samples') content = samplesSection(run, opts, warnings);
    else if (s.id === 'config') content = configSection(run);
    else {
      const figs = bySection.get(s.id);
      const flats = flat.get(s.id);
      if (figs === undefined && flats === undefined) continue;
      content = [
        figs === undefined ? '' : `<div class="grid">\n${figs.join('\n')}\n</div>`,
        flats === undefined ? '' : flatList.list(flats),
      ]
        .filter((x) => x !== '')
        .join('\n');
    }
    body.push(`<section id="${s.id}">\n<h2>${s.title}</h2>\n${content}\n</section>`);
  }
  const present = SECTIONS.filter((s) => body.some((b) => b.startsWith(`<section id="${s.id}"`)));
  const name = opts.title ?? basename(resolve(run.dir));
  const html = reportPage({
    name,
    sub: `${resolve(run.dir)} · generated ${generatedAt.toISOString()}`,
    nav: present,
    body,
  });
  return { html, charts, warnings };
}

type Expected = (typeof EXPECTED)[number];

/** The planned charts plus a placeholder for each expected one missing; per section, expected charts first in their fixed order. */
function orderCharts(plan: MetricChart[]): (MetricChart | Expected)[] {
  const all: (MetricChart | Expected)[] = [...plan, ...EXPECTED.filter((e) => !plan.some((c) => c.id === e.id))];
  const rank = (c: MetricChart | Expected): number => {
    const i = EXPECTED.findIndex((e) => e.id === c.id);
    return i === -1 ? EXPECTED.length : i;
  };
  const sectionRank = (c: MetricChart | Expected): number => SECTIONS.findIndex((s) => s.id === c.section);
  return all
    .map((c, i) => ({ c, i }))
    .sort((a, b) => sectionRank(a.c) - sectionRank(b.c) || rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

async function metricFigureBody(
  c: MetricChart,
  run: RunData,
  opts: Resolved,
  chart: (spec: TopLevelSpec) => Promise<string>,
): Promise<string> {
  const records = run.metrics;
  if (c.id === 'reward') {
    const series = rewardSeries(records, c.band, opts.maxPoints);
    const svg = await chart(rewardSpec(series, SIZE));
    const w = smoothingWindow(series.line.length);
    const parts = [c.band === undefined ? 'Mean reward per step' : `Mean reward per step, band ±1 std over the step's rollouts`];
    if (w > 0) parts.push(`bold: centred moving average over ${w} points`);
    return svg + note(parts.join('; ') + '.');
  }
  const points = seriesPoints(records, c.metrics, opts.maxPoints);
  const line = lineSpec(points, c.metrics, SIZE, c.yTitle, seriesColors(c.metrics), c.percent === true);
  const bars = c.id === 'accuracy' && run.evals !== null ? accuracyErrorBars(run.evals).filter((b) => c.metrics.includes(b.series)) : [];
  let svg = await chart(withErrorBars(line, bars));
  if (bars.length > 0) svg += note(`Bars: ±1 s.e. over problems (the SD of per-problem accuracy / √problems), from ${RUN_FILES.evals}.`);
  const counts = c.metrics.map((m) => records.filter((r) => typeof r[m] === 'number').length);
  const longest = Math.max(...counts);
  if (longest > opts.maxPoints) svg += note(`${longest} points per curve, averaged into ${opts.maxPoints} buckets.`);
  if (c.id === 'accuracy') {
    const last = lastValue(records, METRIC.accuracy);
    if (last !== null)
      svg += note(`Latest: ${percent(last.value)} at step ${last.step} (${counts[0]} evaluation${counts[0] === 1 ? '' : 's'}).`);
  }
  return svg;
}

/** The colour of each series: a token-weight statistic in its outcome's colour, others from the palette in order. */
function seriesColors(metrics: readonly string[]): string[] {
  let next = 0;
  return metrics.map((m) => {
    const o = outcomeOf(m);
    if (o === 'all') return ALL_ROLLOUTS_COLOR;
    if (o !== undefined) return OUTCOME_COLORS[o];
    return SERIES_COLORS[next++ % SERIES_COLORS.length]!;
  });
}

function rewardSeries(records: readonly MetricsRecord[], band: string | undefined, maxPoints: number): RewardSeries {
  const ls: number[] = [];
  const lm: number[] = [];
  const bs: number[] = [];
  const blo: number[] = [];
  const bhi: number[] = [];
  for (const r of records) {
    const m = r[METRIC.rewardMean];
    if (typeof m !== 'number') continue;
    ls.push(r.step);
    lm.push(m);
    const sd = band === undefined ? undefined : r[band];
    if (typeof sd === 'number') {
      bs.push(r.step);
      blo.push(m - sd);
      bhi.push(m + sd);
    }
  }
  const lo = downsample(bs, blo, maxPoints);
  const hi = downsample(bs, bhi, maxPoints);
  const line = downsample(ls, lm, maxPoints).map(([step, mean]) => ({ step, mean }));
  const w = smoothingWindow(line.length);
  const avg =
    w === 0
      ? []
      : movingAverage(
          line.map((p) => p.mean),
          w,
        );
  return {
    line,
    band: lo.map(([step, l], i) => ({ step, lo: l, hi: hi[i]![1] })),
    smooth: avg.map((mean, i) => ({ step: line[i]!.step, mean })),
  };
}
