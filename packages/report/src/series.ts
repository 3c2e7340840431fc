/**
 * Metric records as curves: steps merged, metric names listed, long series averaged into
 * buckets, a centred moving average, and whether a curve is flat (one value throughout).
 */
import type { MetricsRecord } from './run-dir.js';

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

/** The steps and values of metric `name` where it is a number. */
export function curve(records: readonly MetricsRecord[], name: string): { steps: number[]; values: number[] } {
  const steps: number[] = [];
  const values: number[] = [];
  for (const r of records) {
    const v = r[name];
    if (typeof v === 'number') {
      steps.push(r.step);
      values.push(v);
    }
  }
  return { steps, values };
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
    const { steps, values } = curve(records, name);
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

/** A metric that kept one value at every step it was logged at. */
export interface FlatCurve {
  name: string;
  value: number;
  /** steps it was logged at */
  points: number;
}

/**
 * The constant value of each of `metrics`, or `null` when any of them varies (or none was
 * logged). A chart of such curves draws nothing a sentence cannot say: "kl/approx = 0 at
 * every logged step". Equality is exact: a curve that moves by one ulp is not flat.
 */
export function flatCurves(records: readonly MetricsRecord[], metrics: readonly string[]): FlatCurve[] | null {
  const out: FlatCurve[] = [];
  for (const name of metrics) {
    const { values } = curve(records, name);
    if (values.length === 0) continue;
    const v = values[0]!;
    if (values.some((x) => x !== v)) return null;
    out.push({ name, value: v, points: values.length });
  }
  return out.length > 0 ? out : null;
}
