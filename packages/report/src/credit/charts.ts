/** Vega-Lite specs of the credit page: profiles with their 95% bootstrap bands, and each method's AUROC. */
import type { TopLevelSpec } from 'vega-lite';
import { OUTCOME_COLORS, SERIES_COLORS, padDomain, type ChartSize } from '../charts.js';
import type { MethodMetrics } from './schema.js';

/** The label of an error-relative bin: its segment and, for the prefix and the tail, which part of it. */
export function errorBinLabel(b: MethodMetrics['errorProfile'][number]): string {
  if (b.segment === 'on') return 'error line';
  const pct = (x: number) => `${Math.round(x * 100)}`;
  return `${b.segment === 'before' ? 'prefix' : 'after'} ${pct(b.lo)}–${pct(b.hi)}%`;
}

/** A y scale around the means and their intervals; a padded one where they are all equal (uniform credit). */
function yScale(rows: readonly { lo: number; hi: number }[]): { zero: false; domain?: [number, number] } {
  const pad = padDomain(rows.flatMap((r) => [r.lo, r.hi]));
  return pad === undefined ? { zero: false } : { zero: false, domain: pad };
}

/** Mean credit of wrong rollouts by position relative to the first error, ±95% bootstrap CI as rules. */
export function errorProfileSpec(bins: MethodMetrics['errorProfile'], size: ChartSize): TopLevelSpec {
  const rows = bins.flatMap((b) =>
    b.mean === null
      ? []
      : [{ bin: errorBinLabel(b), segment: b.segment, mean: b.mean, lo: b.ci?.[0] ?? b.mean, hi: b.ci?.[1] ?? b.mean, n: b.n }],
  );
  const order = bins.map(errorBinLabel);
  const x = {
    field: 'bin',
    type: 'ordinal' as const,
    sort: order,
    title: 'position relative to the first error',
    axis: { labelAngle: -35 },
  };
  return meanWithInterval(rows, x, size, { color: OUTCOME_COLORS.wrong, interval: 'rule', title: 'mean credit (95% CI)' });
}

/** Mean credit of correct rollouts against t / T, with its 95% bootstrap band (the U-shape figure). */
export function correctProfileSpec(bins: MethodMetrics['correctProfile'], size: ChartSize): TopLevelSpec {
  const rows = bins.flatMap((b) =>
    b.mean === null ? [] : [{ x: (b.lo + b.hi) / 2, mean: b.mean, lo: b.ci?.[0] ?? b.mean, hi: b.ci?.[1] ?? b.mean }],
  );
  const x = { field: 'x', type: 'quantitative' as const, title: 'relative position in the completion (t / T)', scale: { domain: [0, 1] } };
  return meanWithInterval(rows, x, size, { color: OUTCOME_COLORS.correct, interval: 'band', title: 'mean credit (95% CI band)' });
}

/** A mean line with points over `x`, and its interval (`lo`..`hi`) as a rule per point or as a shaded band. */
function meanWithInterval(
  rows: readonly { mean: number; lo: number; hi: number }[],
  x: Record<string, unknown>,
  size: ChartSize,
  o: { color: string; interval: 'rule' | 'band'; title: string },
): TopLevelSpec {
  const rule = o.interval === 'rule';
  return {
    width: size.width,
    height: size.height,
    data: { values: rows },
    layer: [
      {
        mark: rule ? { type: 'rule', strokeWidth: 1.6, color: o.color } : { type: 'area', opacity: 0.18, color: o.color },
        encoding: { x, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' } },
      },
      {
        mark: { type: 'line', strokeWidth: rule ? 1.4 : 2, color: o.color, point: { size: rule ? 36 : 24, filled: true, color: o.color } },
        encoding: { x, y: { field: 'mean', type: 'quantitative', title: o.title, scale: yScale(rows) } },
      },
    ],
  } as TopLevelSpec;
}

/** Every method's error-line AUROC with its 95% CI, against the 0.5 of uniform credit. */
export function aurocSpec(methods: readonly MethodMetrics[], size: ChartSize): TopLevelSpec {
  const rows = methods.flatMap((m) => {
    const a = m.wrong.auroc;
    return a.mean === null ? [] : [{ method: m.name, mean: a.mean, lo: a.ci?.[0] ?? a.mean, hi: a.ci?.[1] ?? a.mean }];
  });
  const names = methods.map((m) => m.name);
  const y = { field: 'method', type: 'nominal' as const, sort: names, title: null };
  const color = {
    field: 'method',
    type: 'nominal' as const,
    scale: { domain: names, range: names.map((_, i) => SERIES_COLORS[i % SERIES_COLORS.length]!) },
    legend: null,
  };
  return {
    width: size.width,
    height: Math.max(60, 26 * names.length),
    layer: [
      {
        data: { values: [{ x: 0.5 }] },
        mark: { type: 'rule', strokeDash: [4, 3], color: '#888' },
        encoding: { x: { field: 'x', type: 'quantitative' } },
      },
      {
        data: { values: rows },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: { y, x: { field: 'lo', type: 'quantitative' }, x2: { field: 'hi' }, color },
      },
      {
        data: { values: rows },
        mark: { type: 'point', filled: true, size: 60 },
        encoding: {
          y,
          x: { field: 'mean', type: 'quantitative', title: 'error-line AUROC (95% CI; 0.5 = no preference)', scale: { zero: false } },
          color,
        },
      },
    ],
  } as TopLevelSpec;
}
