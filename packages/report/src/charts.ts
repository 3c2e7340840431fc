/**
 * Vega-Lite specs for every chart of the report, rendered to SVG strings in
 * Node by vega's headless renderer (`renderer: 'none'`, no canvas, no DOM).
 * Data always goes in inline (`values`), never by URL, so nothing is fetched.
 * The charting libraries load on the first render, not with the package.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { CheckpointProfile } from './checkpoint-stats.js';
import type { SeriesPoint } from './series.js';
import type { Outcome, PositionBin, WeightHistogram } from './weight-stats.js';

/**
 * Correct and wrong rollouts have one colour each, in every chart and badge of the page; no other
 * series is drawn in either colour (nor in one that could pass for it).
 */
export const OUTCOME_COLORS: Record<Outcome, string> = { correct: '#1b7f5a', wrong: '#c4501b' };
/** Statistics over all rollouts (`weights/all/*`), beside correct and wrong. */
export const ALL_ROLLOUTS_COLOR = '#3b6fb6';
/** Other series, in legend order: no green, orange or red. */
export const SERIES_COLORS = ['#3b6fb6', '#8a4fb0', '#b8860b', '#4a8f9f', '#d0417e', '#6b6b6b', '#1f3f73', '#9a8c73'];

const CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif',
  view: { stroke: '#d8d8d8' },
  axis: { labelColor: '#444', titleColor: '#333', gridColor: '#ececec', labelFontSize: 10, titleFontSize: 11, titleFontWeight: 500 },
  // Above the plot, in as many rows as it takes, so a legend of long names never widens the
  // chart (a wider SVG is scaled down to fit its figure: the plot would shrink with it).
  legend: { orient: 'top', direction: 'horizontal', labelFontSize: 11, symbolSize: 60, title: null, labelLimit: 220, columnPadding: 14 },
} as const;

/**
 * Room around the drawing. Vega measures text without a canvas here (an estimate), and a browser's
 * font may be wider: the margin keeps the y-axis title and the last tick label inside the SVG.
 */
const PADDING = { left: 14, right: 14, top: 6, bottom: 6 };

/** Chart size in CSS pixels of the plotting area (axes and legend add to it). */
export interface ChartSize {
  width: number;
  height: number;
}

/** Render a Vega-Lite spec to a standalone `<svg>` string. Warnings go to `warn`, never to the console. */
export async function renderSvg(spec: TopLevelSpec, warn: (message: string) => void = () => {}): Promise<string> {
  const [vega, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const handler = (_method: string, level: string, args: unknown[]): void => warn(`${level} ${args.map(String).join(' ')}`.trim());
  const logger = vega.logger(vega.Warn, undefined, handler);
  const compiled = compile({ padding: PADDING, ...spec, config: { ...CONFIG, ...(spec.config ?? {}) } } as TopLevelSpec, { logger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger, logLevel: vega.Warn });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Metric curves against the optimizer step, series `series[i]` in `colors[i]`; `yPercent` labels a
 * fraction's axis in percent.
 * Points are drawn when a series is short (eval-only metrics such as accuracy).
 * The legend (several series only) wraps into rows of at most `legendColumns(size)` entries.
 */
export function lineSpec(
  points: readonly SeriesPoint[],
  series: readonly string[],
  size: ChartSize,
  yTitle: string,
  colors: readonly string[] = SERIES_COLORS,
  yPercent = false,
): TopLevelSpec {
  const maxLen = Math.max(0, ...series.map((s) => points.filter((p) => p.series === s).length));
  const xPad = padDomain(points.map((p) => p.step));
  const yPad = padDomain(points.map((p) => p.value));
  return {
    width: size.width,
    height: size.height,
    data: { values: points as SeriesPoint[] },
    mark: { type: 'line', strokeWidth: 1.6, point: maxLen <= 60 ? { size: 22, filled: true } : false },
    encoding: {
      x: {
        field: 'step',
        type: 'quantitative',
        title: 'step',
        axis: { tickMinStep: 1, format: '~s' },
        ...(xPad ? { scale: { domain: xPad } } : {}),
      },
      y: {
        field: 'value',
        type: 'quantitative',
        title: yTitle,
        scale: yPad ? { domain: yPad } : { zero: false },
        axis: yPercent ? { format: '~%' } : valueAxis(points.map((p) => p.value)),
      },
      color: {
        field: 'series',
        type: 'nominal',
        sort: series as string[],
        scale: { domain: series as string[], range: series.map((_, i) => colors[i % colors.length]!) },
        legend: series.length > 1 ? { columns: legendColumns(size, series) } : null,
      },
    },
  };
}

/** A vertical bar from `lo` to `hi` at `step` on the curve `series` (a value ± 1 s.e.). */
export interface ErrorBar {
  step: number;
  series: string;
  lo: number;
  hi: number;
}

/** `spec` (a `lineSpec`) with `bars` drawn over its curves in their colours. */
export function withErrorBars(spec: TopLevelSpec, bars: readonly ErrorBar[]): TopLevelSpec {
  if (bars.length === 0) return spec;
  const { width, height, data, mark, encoding } = spec as unknown as {
    width: number;
    height: number;
    data: unknown;
    mark: unknown;
    encoding: Record<string, unknown>;
  };
  // the y domain widened to hold the bars (a clip would number its SVG ids from a global counter)
  const y = encoding.y as { scale?: { domain?: [number, number] } };
  const domain = y.scale?.domain;
  const widened =
    domain === undefined
      ? encoding
      : {
          ...encoding,
          y: {
            ...y,
            scale: { ...y.scale, domain: [Math.min(domain[0], ...bars.map((b) => b.lo)), Math.max(domain[1], ...bars.map((b) => b.hi))] },
          },
        };
  return {
    width,
    height,
    layer: [
      { data, mark, encoding: widened },
      {
        data: { values: bars as ErrorBar[] },
        mark: { type: 'rule', strokeWidth: 1.2 },
        encoding: {
          x: { field: 'step', type: 'quantitative' },
          y: { field: 'lo', type: 'quantitative' },
          y2: { field: 'hi' },
          // the line layer's colour encoding as it is: one shared legend
          color: encoding.color,
        },
      },
    ],
  } as TopLevelSpec;
}

/** Legend entries per row that fit the plot's width: an entry is its symbol, its label (about 7 px a character at 11 px) and the gap. */
function legendColumns(size: ChartSize, labels: readonly string[]): number {
  const entry = 30 + 7 * Math.max(0, ...labels.map((l) => l.length));
  return Math.max(1, Math.min(labels.length, Math.floor(size.width / entry)));
}

/**
 * A domain around a single value (one logged step, a constant metric), where
 * vega would otherwise draw a zero-width scale with NaN ticks; `undefined` when
 * the values already span a range.
 */
export function padDomain(values: readonly number[]): [number, number] | undefined {
  if (values.length === 0) return undefined;
  let lo = values[0]!;
  let hi = lo;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (hi > lo) return undefined;
  const d = lo === 0 ? 1 : Math.abs(lo) * 0.1;
  return [lo - d, lo + d];
}

/** Scientific tick labels for values that are all tiny or huge (learning rates, token counts); vega's default otherwise. */
function valueAxis(values: readonly number[]): { format?: string } {
  let max = 0;
  for (const v of values) max = Math.max(max, Math.abs(v));
  return max > 0 && (max < 1e-3 || max >= 1e6) ? { format: '.2~e' } : {};
}

/** Mean reward per step, and where `reward/std` was logged, the band mean ± std. */
export interface RewardSeries {
  line: { step: number; mean: number }[];
  band: { step: number; lo: number; hi: number }[];
  /** A centred moving average of `line`, drawn bold over it; empty for short runs. */
  smooth: { step: number; mean: number }[];
}

/** Mean reward per step with a ±1 std band over the step's rollouts. */
export function rewardSpec(reward: RewardSeries, size: ChartSize): TopLevelSpec {
  const xPad = padDomain(reward.line.map((p) => p.step));
  const yPad = padDomain([...reward.line.map((p) => p.mean), ...reward.band.flatMap((p) => [p.lo, p.hi])]);
  const x = {
    field: 'step',
    type: 'quantitative' as const,
    title: 'step',
    axis: { tickMinStep: 1, format: '~s' },
    ...(xPad ? { scale: { domain: xPad } } : {}),
  };
  const layers: unknown[] = [];
  if (reward.band.length > 0) {
    layers.push({
      data: { values: reward.band },
      mark: { type: 'area', opacity: 0.18, color: SERIES_COLORS[0] },
      encoding: { x, y: { field: 'lo', type: 'quantitative', title: 'reward (mean ± std)' }, y2: { field: 'hi' } },
    });
  }
  const smoothed = reward.smooth.length > 0;
  layers.push({
    data: { values: reward.line },
    mark: {
      type: 'line',
      strokeWidth: smoothed ? 1 : 1.8,
      opacity: smoothed ? 0.6 : 1,
      color: SERIES_COLORS[0],
      point: reward.line.length <= 60 ? { size: 22, filled: true } : false,
    },
    encoding: {
      x,
      y: { field: 'mean', type: 'quantitative', title: 'reward (mean ± std)', scale: yPad ? { domain: yPad } : { zero: false } },
    },
  });
  if (smoothed) {
    layers.push({
      data: { values: reward.smooth },
      mark: { type: 'line', strokeWidth: 2.4, color: '#1f3f73' },
      encoding: { x, y: { field: 'mean', type: 'quantitative' } },
    });
  }
  return { width: size.width, height: size.height, layer: layers } as TopLevelSpec;
}

/** Fraction of each outcome's tokens per weight bin, the two outcomes overlaid. */
export function histogramSpec(hist: WeightHistogram, size: ChartSize): TopLevelSpec {
  const rows: { lo: number; hi: number; outcome: string; fraction: number; count: number }[] = [];
  for (const outcome of ['correct', 'wrong'] as const) {
    const total = hist.totals[outcome];
    if (total === 0) continue;
    hist.counts[outcome].forEach((count, i) => {
      rows.push({ lo: hist.edges[i]!, hi: hist.edges[i + 1]!, outcome: `${outcome} (${total} tokens)`, fraction: count / total, count });
    });
  }
  const domain = (['correct', 'wrong'] as const).filter((o) => hist.totals[o] > 0);
  return {
    width: size.width,
    height: size.height,
    data: { values: rows },
    mark: { type: 'bar', opacity: 0.55, stroke: 'white', strokeWidth: 0.4 },
    encoding: {
      x: { field: 'lo', type: 'quantitative', title: 'token weight', scale: { zero: false, nice: false } },
      x2: { field: 'hi' },
      y: { field: 'fraction', type: 'quantitative', title: 'fraction of tokens', stack: null, axis: { format: '~%' } },
      y2: { datum: 0 },
      color: {
        field: 'outcome',
        type: 'nominal',
        scale: { domain: domain.map((o) => `${o} (${hist.totals[o]} tokens)`), range: domain.map((o) => OUTCOME_COLORS[o]) },
        legend: { symbolOpacity: 1 },
      },
    },
  };
}

/** Mean token weight against relative position, one line per outcome with a ±1 standard-error band. */
export function positionSpec(bins: readonly PositionBin[], size: ChartSize): TopLevelSpec {
  const rows: { x: number; outcome: string; mean: number; lo: number; hi: number }[] = [];
  const outcomes = (['correct', 'wrong'] as const).filter((o) => bins.some((b) => b.stats[o].mean !== null));
  for (const b of bins) {
    for (const o of outcomes) {
      const { mean, sem } = b.stats[o];
      if (mean === null) continue;
      rows.push({ x: (b.lo + b.hi) / 2, outcome: o, mean, lo: mean - (sem ?? 0), hi: mean + (sem ?? 0) });
    }
  }
  const x = { field: 'x', type: 'quantitative' as const, title: 'relative position in completion (t / len)', scale: { domain: [0, 1] } };
  const color = {
    field: 'outcome',
    type: 'nominal' as const,
    scale: { domain: [...outcomes], range: outcomes.map((o) => OUTCOME_COLORS[o]) },
  };
  return {
    width: size.width,
    height: size.height,
    data: { values: rows },
    layer: [
      // the legend is drawn from the band's layer (vega-lite merges it with the lines'): full-strength symbols
      {
        mark: { type: 'area', opacity: 0.16 },
        encoding: {
          x,
          y: { field: 'lo', type: 'quantitative', title: 'mean token weight' },
          y2: { field: 'hi' },
          color: { ...color, legend: { symbolOpacity: 1, symbolType: 'circle' } },
        },
      },
      {
        mark: { type: 'line', strokeWidth: 2, point: { size: 26, filled: true } },
        encoding: { x, y: { field: 'mean', type: 'quantitative', title: 'mean token weight', scale: { zero: false } }, color },
      },
    ],
  } as TopLevelSpec;
}

/** The reasoning-token U-shape of each checkpoint: one line per checkpoint step, mean weight against t / (R - 1). */
export function checkpointProfileSpec(profiles: readonly CheckpointProfile[], size: ChartSize): TopLevelSpec {
  const rows = profiles.flatMap((p) =>
    p.bins.flatMap((b) => (b.mean === null ? [] : [{ x: (b.lo + b.hi) / 2, step: `step ${p.step}`, order: p.step, mean: b.mean }])),
  );
  const steps = profiles.map((p) => `step ${p.step}`);
  return {
    width: size.width,
    height: size.height,
    data: { values: rows },
    mark: { type: 'line', strokeWidth: 2, point: { size: 22, filled: true } },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: 'relative position in the reasoning, t / (R − 1)', scale: { domain: [0, 1] } },
      y: { field: 'mean', type: 'quantitative', title: 'mean token weight', scale: { zero: false } },
      // later checkpoints darker: a sequential scheme over the steps in order
      color: {
        field: 'step',
        type: 'ordinal',
        sort: steps,
        scale: { scheme: 'viridis', reverse: true },
        legend: { title: 'checkpoint', columns: legendColumns(size, steps) },
      },
    },
  } as TopLevelSpec;
}
