/**
 * The learning-rate protocol of `rlvr compare --tune lr=...`: the grid, the tuning seeds, each row's
 * choice and the widening of a grid whose best rate sits at an edge, the JSON record and its text.
 * Pure: the reference trainer runs the tuning runs and hands their validation accuracies here.
 *
 * Protocol: every row (estimator, variant or plugin method) is trained at every rate of its grid on
 * each tuning seed, and scored by its final accuracy on the validation split (problems of the
 * training task that no tuning run trains on; never the held-out set). A row's rate is the one of
 * highest mean validation accuracy over the tuning seeds, the lower rate on a tie. A choice at
 * an edge of the grid widens that row's grid on that side by the grid's own ratio there, one rate at
 * a time, up to `maxWiden` rates per row; a choice still at an edge then is recorded as such.
 */
import { intFlag, percent, textTable, usageError } from '@rlvr/core';
import type { FlagValues } from '@rlvr/core';
import { z } from 'zod';
import { firstSeeds, listFlag } from './compare-flags.js';

/** What `--tune` may tune, and the config field it sets. */
const TUNABLE = { lr: 'trainer.schedule.lr' } as const;

/** Tuning seeds count up from here by default, far from the comparison's (0, 1, 2, ...). */
export const TUNE_SEED_BASE = 1000;

/** A rate with three significant digits, so grids and directory names stay readable (`3.16e-5`). */
const round3 = (x: number): number => Number(x.toPrecision(3));

/** `3e-5`, `3.16e-5`, `1e-3`: a rate as it names its directory (`lr-3e-5`) and its column. */
export function rateLabel(x: number): string {
  return x.toExponential().replace('e+', 'e');
}

/**
 * `--tune lr=1e-5,3e-5,1e-4` (the rates, any order, sorted) or `lr=1e-5..1e-3x3` (N rates evenly
 * spaced in log from A to B, each rounded to three significant digits): at least two distinct
 * positive rates. Only `lr` is tunable for now.
 */
export function tuneFlag(v: string): { key: 'lr'; grid: number[] } {
  const bad = (m: string) => usageError(`${m} (got ${JSON.stringify(v)})`, '--tune');
  const eq = v.indexOf('=');
  if (eq < 0) throw bad('must be KEY=GRID, e.g. lr=1e-5,3e-5,1e-4 or lr=1e-5..1e-3x3');
  const key = v.slice(0, eq).trim();
  if (key !== 'lr') throw bad(`only lr (${TUNABLE.lr}) is tunable for now, not ${JSON.stringify(key)}`);
  const text = v.slice(eq + 1).trim();
  const num = (s: string): number => {
    const x = s.trim() === '' ? Number.NaN : Number(s);
    if (!Number.isFinite(x) || x <= 0) throw bad(`a rate must be a positive number, not ${JSON.stringify(s.trim())}`);
    return x;
  };
  let grid: number[];
  const range = /^(.+)\.\.(.+)x(\d+)$/.exec(text);
  if (text.includes('..') && range === null) throw bad('a range is A..BxN, e.g. lr=1e-5..1e-3x3');
  if (range !== null) {
    const [a, b, n] = [num(range[1]!), num(range[2]!), Number(range[3])];
    if (!(a < b)) throw bad('a range A..BxN needs A < B');
    if (n < 2 || n > 20) throw bad('a range A..BxN needs N from 2 to 20 rates');
    grid = Array.from({ length: n }, (_, i) => round3(a * (b / a) ** (i / (n - 1))));
  } else {
    const items = text.split(',');
    if (items.some((s) => s.trim() === '')) throw bad('must be comma-separated rates, e.g. lr=1e-5,3e-5,1e-4');
    grid = items.map(num);
  }
  const twice = grid.find((x, i) => grid.indexOf(x) !== i);
  if (twice !== undefined) throw bad(`lists the rate ${twice} twice`);
  if (grid.length < 2) throw bad('needs at least two rates: a grid of one has nothing to choose');
  return { key: 'lr', grid: grid.sort((a, b) => a - b) };
}

/**
 * `--tune-seeds`: `2` is two seeds counting up from `TUNE_SEED_BASE` (1000, 1001), a list such as
 * `7,8` those seeds; none may be a comparison seed (the choice must not see the seeds it is judged on).
 */
export function tuneSeedsFlag(v: string | undefined, comparison: readonly number[]): number[] {
  const f = 'tune-seeds';
  const seeds = v?.includes(',')
    ? listFlag(f, v).map((s) => intFlag({ [f]: s }, f, { min: 0, max: 0xffffffff })!)
    : firstSeeds(v === undefined ? 2 : intFlag({ [f]: v }, f, { min: 1, max: 1000 })!, TUNE_SEED_BASE);
  const shared = seeds.filter((s) => comparison.includes(s));
  if (shared.length > 0)
    throw usageError(
      `tuning seed${shared.length > 1 ? 's' : ''} ${shared.join(', ')} ${shared.length > 1 ? 'are' : 'is'} also comparison seed${shared.length > 1 ? 's' : ''}: tuning and comparison seeds must differ`,
      '--tune-seeds',
    );
  return seeds;
}

/** `--tune-max-widen`: rates added to one row's grid at most (default 3). */
export function maxWidenFlag(values: FlagValues): number {
  return intFlag(values, 'tune-max-widen', { min: 0, max: 20 }) ?? 3;
}

const Stat = z.object({ mean: z.number(), sd: z.number().nullable() });

/** One rate of one row: the final validation accuracy of each tuning seed, their mean and SD (null with one seed). */
const TunePointSchema = z
  .object({ lr: z.number().positive(), seeds: z.array(z.number()), accuracy: z.array(z.number()) })
  .extend(Stat.shape);
export type TunePoint = z.output<typeof TunePointSchema>;

/** One row's tuning: its grid (initial and widened, ascending), each rate's validation accuracies, the choice. */
const TuneRowSchema = z.object({
  estimator: z.string(),
  /** every rate run, ascending */
  grid: z.array(z.number().positive()),
  /** the rates added by widening, in the order they were added */
  widened: z.array(z.number().positive()),
  points: z.array(TunePointSchema),
  /** the rate of highest mean validation accuracy (the lower on a tie): the comparison's rate for this row */
  chosen: z.number().positive(),
  /** `low` / `high`: the choice is still at that edge of the grid (the widening cap was reached); null inside */
  edge: z.enum(['low', 'high']).nullable(),
});
export type TuneRow = z.output<typeof TuneRowSchema>;

/** `compare.json`'s `tune`: the declared protocol and its outcome. */
export const TuneRecordSchema = z.object({
  key: z.literal('lr'),
  /** the config field each row's chosen rate sets in its comparison runs */
  field: z.literal(TUNABLE.lr),
  /** the grid as given (ascending) */
  grid: z.array(z.number().positive()),
  seeds: z.array(z.number()),
  maxWiden: z.number().int().min(0),
  /** the validation split the rates were scored on */
  validation: z.object({ problems: z.number().int().positive(), definition: z.string() }),
  rule: z.string(),
  rows: z.array(TuneRowSchema),
});
export type TuneRecord = z.output<typeof TuneRecordSchema>;

/** The choice rule, as compare.json states it. */
const TUNE_RULE =
  'highest mean final validation accuracy over the tuning seeds, the lower rate on a tie; a choice at an edge of the grid adds the next rate beyond it (the ratio of the two rates at that edge), up to maxWiden rates per row';

/**
 * One row's state: `accuracy(lr)` gives the final validation accuracy of each tuning seed at a rate of
 * `grid` (ascending, every rate run). `widened` are the rates added so far.
 */
export function tuneRow(
  estimator: string,
  grid: readonly number[],
  widened: readonly number[],
  accuracy: (lr: number) => number[],
  seeds: readonly number[],
): TuneRow {
  const sorted = [...grid].sort((a, b) => a - b);
  const points = sorted.map((lr) => {
    const acc = accuracy(lr);
    const mean = acc.reduce((a, b) => a + b, 0) / acc.length;
    const sd = acc.length < 2 ? null : Math.sqrt(acc.reduce((a, x) => a + (x - mean) ** 2, 0) / (acc.length - 1));
    return { lr, seeds: [...seeds], accuracy: acc, mean, sd };
  });
  // strictly greater: the first (lowest) rate of the best mean wins a tie
  let best = points[0]!;
  for (const p of points) if (p.mean > best.mean) best = p;
  const edge = best === points[0] ? 'low' : best === points.at(-1) ? 'high' : null;
  return { estimator, grid: sorted, widened: [...widened], points, chosen: best.lr, edge };
}

/** The rate to add to `row`'s grid beyond the edge its choice sits at (the grid's ratio there), or null: inside, or `maxWiden` reached. */
export function nextRate(row: TuneRow, maxWiden: number): number | null {
  if (row.edge === null || row.widened.length >= maxWiden) return null;
  const g = row.grid;
  const next = row.edge === 'low' ? g[0]! / (g[1]! / g[0]!) : g.at(-1)! * (g.at(-1)! / g.at(-2)!);
  // three digits, unless that is a rate of the grid already (a ratio within rounding of 1)
  return g.includes(round3(next)) ? next : round3(next);
}

/** The line for a row whose choice stayed at an edge: the result says so, never silently. */
function edgeLine(row: TuneRow, maxWiden: number): string {
  return `${row.estimator}: chosen lr ${rateLabel(row.chosen)} is at the ${row.edge} edge of its grid after ${row.widened.length} widening(s) (--tune-max-widen ${maxWiden}): its best rate may lie beyond`;
}

/**
 * The tuning table of the text report: one line per row, one column per rate any row ran, each cell
 * the mean ± SD (percentage points) of the final validation accuracy over the tuning seeds, `*` on
 * the chosen rate; then the edge lines.
 */
export function formatTune(t: TuneRecord): string {
  const rates = [...new Set(t.rows.flatMap((r) => r.grid))].sort((a, b) => a - b);
  const cell = (r: TuneRow, lr: number): string => {
    const p = r.points.find((x) => x.lr === lr);
    if (p === undefined) return '-';
    return `${percent(p.mean)}${p.sd === null ? '' : ` ± ${(100 * p.sd).toFixed(1)}`}${lr === r.chosen ? '*' : ''}`;
  };
  const head = `learning rates (${TUNABLE.lr}) tuned on ${t.seeds.length} tuning seed(s) (${t.seeds.join(', ')}) on a validation split of ${t.validation.problems} problems: ${t.validation.definition}`;
  const table = textTable(
    ['estimator', ...rates.map((lr) => `lr ${rateLabel(lr)}`), 'chosen'],
    t.rows.map((r) => [r.estimator, ...rates.map((lr) => cell(r, lr)), rateLabel(r.chosen) + (r.edge === null ? '' : ` (${r.edge} edge)`)]),
  );
  const foot = `final validation accuracy, mean ± SD over tuning seeds; * the chosen rate (${TUNE_RULE}; initial grid ${t.grid.map(rateLabel).join(', ')})`;
  const edges = t.rows.filter((r) => r.edge !== null).map((r) => edgeLine(r, t.maxWiden));
  return [head, '', table, '', foot, ...edges].join('\n');
}

/** The tuning settings of `rlvr compare --tune` (`CompareOptions.tune`). */
export interface TuneSettings {
  grid: readonly number[];
  seeds: readonly number[];
  maxWiden: number;
}

/**
 * Run the protocol: `train(points)` trains (or reads back) the tuning runs of each `{estimator, lr}` on every
 * tuning seed and returns true when it was stopped; `accuracy(estimator, lr)` is then each tuning seed's final
 * validation accuracy. First every row at every rate of the grid, then, round by round, one more rate for each
 * row whose best rate is at an edge, until none is (or its cap is reached). Returns the rows, or null when stopped.
 * `info` hears each widening, each choice left at an edge, and the choices.
 */
export async function tuneRates(
  estimators: readonly string[],
  t: TuneSettings,
  train: (points: { estimator: string; lr: number }[]) => Promise<boolean>,
  accuracy: (estimator: string, lr: number) => number[],
  info: (line: string) => void,
): Promise<TuneRow[] | null> {
  const grids = new Map(estimators.map((e) => [e, [...t.grid]]));
  let todo = t.grid.flatMap((lr) => estimators.map((estimator) => ({ estimator, lr })));
  let rows: TuneRow[] = [];
  while (todo.length > 0) {
    if (await train(todo)) return null;
    rows = estimators.map((e) => tuneRow(e, grids.get(e)!, grids.get(e)!.slice(t.grid.length), (lr) => accuracy(e, lr), t.seeds));
    todo = [];
    for (const r of rows) {
      const lr = nextRate(r, t.maxWiden);
      if (lr === null) continue;
      info(`tune: ${r.estimator}: best lr ${rateLabel(r.chosen)} is at the ${r.edge} edge of its grid: adding lr ${rateLabel(lr)}`);
      grids.get(r.estimator)!.push(lr);
      todo.push({ estimator: r.estimator, lr });
    }
  }
  for (const r of rows) if (r.edge !== null) info(`tune: ${edgeLine(r, t.maxWiden)}`);
  info(`tune: chosen ${rows.map((r) => `${r.estimator} lr ${rateLabel(r.chosen)}`).join(', ')}`);
  return rows;
}

/** compare.json's `tune`: the settings, the validation split, the rule, the rows. */
export function tuneRecord(t: TuneSettings, validation: TuneRecord['validation'], rows: TuneRow[]): TuneRecord {
  return { key: 'lr', field: TUNABLE.lr, grid: [...t.grid], seeds: [...t.seeds], maxWiden: t.maxWiden, validation, rule: TUNE_RULE, rows };
}
