/**
 * Which metric goes on which chart. Known metric families get a fixed place
 * and share a chart (all `loss/*` together, `clip/low_frac` with
 * `clip/high_frac`, `weights/correct/mean` with `weights/wrong/mean`); every
 * other metric gets a chart of its own in "Other metrics".
 */
import type { MetricsRecord } from './run-dir.js';

export type SectionId = 'reward' | 'optimisation' | 'rollouts' | 'weights' | 'other';

/** One chart of metric curves against the optimizer step. */
export interface MetricChart {
  /** Stable id, used for the `data-chart` attribute of the figure. */
  id: string;
  section: SectionId;
  title: string;
  /** Metric names drawn as series, in legend order. */
  metrics: string[];
  /** For the reward chart: the metric drawn as a ±band around the first series. */
  band?: string;
}

/**
 * One record per step, in step order. Several lines may share a step (eval
 * metrics logged on a line of their own, or steps re-run after a resume):
 * their metrics are merged, a later line's value winning. `repeated` counts
 * the steps that had more than one line.
 */
export function mergeSteps(records: readonly MetricsRecord[]): { records: MetricsRecord[]; repeated: number } {
  const byStep = new Map<number, MetricsRecord>();
  const seen = new Set<number>();
  let repeated = 0;
  for (const r of records) {
    const prev = byStep.get(r.step);
    if (prev === undefined) byStep.set(r.step, { ...r });
    else {
      if (!seen.has(r.step)) {
        seen.add(r.step);
        repeated++;
      }
      Object.assign(prev, r);
    }
  }
  return { records: [...byStep.values()].sort((a, b) => a.step - b.step), repeated };
}

/** Every metric name that appears in `records`, in first-seen order (`step` excluded). */
export function metricNames(records: readonly MetricsRecord[]): string[] {
  const seen = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) if (k !== 'step') seen.add(k);
  return [...seen];
}

interface Family {
  id: string;
  section: SectionId;
  title: string;
  match: (name: string) => boolean;
}

const FAMILIES: readonly Family[] = [
  { id: 'reward', section: 'reward', title: 'Reward (mean ± std over rollouts)', match: (n) => n === 'reward/mean' },
  { id: 'accuracy', section: 'reward', title: 'Held-out accuracy', match: (n) => n === 'accuracy' || n.startsWith('accuracy/') },
  { id: 'reward-other', section: 'reward', title: 'Other reward statistics', match: (n) => n.startsWith('reward/') && n !== 'reward/std' },
  { id: 'loss', section: 'optimisation', title: 'Loss', match: (n) => n === 'loss' || n.startsWith('loss/') },
  { id: 'kl', section: 'optimisation', title: 'KL divergence', match: (n) => n === 'kl' || n.startsWith('kl/') },
  { id: 'entropy', section: 'optimisation', title: 'Entropy', match: (n) => n === 'entropy' || n.startsWith('entropy/') },
  { id: 'clip', section: 'optimisation', title: 'Clipped token fractions', match: (n) => n.startsWith('clip/') },
  { id: 'grad_norm', section: 'optimisation', title: 'Gradient norm', match: (n) => n === 'grad_norm' || n.startsWith('grad_norm/') },
  { id: 'lr', section: 'optimisation', title: 'Learning rate', match: (n) => n === 'lr' || n.startsWith('lr/') },
  { id: 'frac_reward_zero_std', section: 'rollouts', title: 'Fraction of groups with zero reward std', match: (n) => n === 'frac_reward_zero_std' },
  { id: 'completions', section: 'rollouts', title: 'Completion length', match: (n) => n.startsWith('completions/') },
  { id: 'tokens_per_s', section: 'rollouts', title: 'Throughput (tokens / s)', match: (n) => n === 'tokens_per_s' },
];

/** `weights/<outcome>/<stat>`: estimator metrics split by outcome, charted per statistic. */
const WEIGHT_METRIC = /^weights\/([^/]+)\/([^/]+)$/;

/** Plan the metric charts for a run whose metrics are `names`. Charts are in section order. */
export function planMetricCharts(names: readonly string[]): MetricChart[] {
  const charts: MetricChart[] = [];
  const placed = new Set<string>();
  const has = new Set(names);
  for (const f of FAMILIES) {
    const metrics = names.filter((n) => !placed.has(n) && f.match(n));
    if (metrics.length === 0) continue;
    for (const m of metrics) placed.add(m);
    const chart: MetricChart = { id: f.id, section: f.section, title: f.title, metrics };
    if (f.id === 'reward' && has.has('reward/std')) {
      chart.band = 'reward/std';
      placed.add('reward/std');
    }
    charts.push(chart);
  }
  // reward/std without reward/mean is just another reward statistic.
  if (has.has('reward/std') && !placed.has('reward/std')) {
    charts.push({ id: 'reward-std', section: 'reward', title: 'Reward std', metrics: ['reward/std'] });
    placed.add('reward/std');
  }
  const byStat = new Map<string, string[]>();
  for (const n of names) {
    if (placed.has(n)) continue;
    const m = WEIGHT_METRIC.exec(n);
    if (m === null) continue;
    const stat = m[2]!;
    byStat.set(stat, [...(byStat.get(stat) ?? []), n]);
    placed.add(n);
  }
  for (const [stat, metrics] of byStat) {
    charts.push({ id: `weights-${stat}`, section: 'weights', title: `Token weight ${stat} by outcome`, metrics });
  }
  let other = 0;
  for (const n of names) {
    if (placed.has(n)) continue;
    charts.push({ id: `metric-${other++}`, section: n.startsWith('weights/') ? 'weights' : 'other', title: n, metrics: [n] });
  }
  const order: SectionId[] = ['reward', 'optimisation', 'rollouts', 'weights', 'other'];
  return charts.sort((a, b) => order.indexOf(a.section) - order.indexOf(b.section));
}

/** One point of a metric curve. */
export interface SeriesPoint {
  step: number;
  series: string;
  value: number;
}

/**
 * The points of `metrics` in long form (`{step, series, value}`), skipping
 * steps where a metric is absent or null. A series longer than `maxPoints` is
 * averaged over `maxPoints` consecutive buckets (step and value alike), so a
 * 100k-step run still draws as a light SVG.
 */
export function seriesPoints(records: readonly MetricsRecord[], metrics: readonly string[], maxPoints: number): SeriesPoint[] {
  const out: SeriesPoint[] = [];
  for (const name of metrics) {
    const steps: number[] = [];
    const values: number[] = [];
    for (const r of records) {
      const v = r[name];
      if (typeof v === 'number') {
        steps.push(r.step);
        values.push(v);
      }
    }
    for (const [step, value] of downsample(steps, values, maxPoints)) out.push({ step, series: name, value });
  }
  return out;
}

/** Bucket means of consecutive points, at most `maxPoints` buckets; unchanged when short enough. */
export function downsample(xs: readonly number[], ys: readonly number[], maxPoints: number): [number, number][] {
  const n = xs.length;
  if (n <= maxPoints) return xs.map((x, i) => [x, ys[i]!]);
  const out: [number, number][] = [];
  for (let b = 0; b < maxPoints; b++) {
    const start = Math.floor((b * n) / maxPoints);
    const end = Math.floor(((b + 1) * n) / maxPoints);
    let sx = 0;
    let sy = 0;
    for (let i = start; i < end; i++) {
      sx += xs[i]!;
      sy += ys[i]!;
    }
    out.push([sx / (end - start), sy / (end - start)]);
  }
  return out;
}

/**
 * Centred moving average over `window` points (odd); near the ends the window
 * shrinks symmetrically so the curve neither lags nor runs off the data.
 */
export function movingAverage(values: readonly number[], window: number): number[] {
  const half = Math.floor(window / 2);
  const n = values.length;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + values[i]!;
  return values.map((_, i) => {
    const h = Math.min(half, i, n - 1 - i);
    return (prefix[i + h + 1]! - prefix[i - h]!) / (2 * h + 1);
  });
}

/** The moving-average window for a curve of `n` points: about n/15, odd, at least 3; 0 (no smoothing) below 20 points. */
export function smoothingWindow(n: number): number {
  if (n < 20) return 0;
  const w = Math.max(3, Math.round(n / 15));
  return w % 2 === 1 ? w : w + 1;
}
