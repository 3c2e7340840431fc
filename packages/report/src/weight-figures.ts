/**
 * The figures of the token weights in `samples.jsonl` (optionally a step range of it): the
 * histogram of weights by outcome and the mean weight against position (the U-shape). Each is a
 * chart with a note and its numbers; a new figure of the weights goes here, as one more entry.
 */
import type { TopLevelSpec } from 'vega-lite';
import { histogramSpec, positionSpec } from './charts.js';
import type { ChartSize } from './charts.js';
import type { ReportOptionsResolved } from './options.js';
import { figure, histogramTable, noData, note, positionTable } from './report-parts.js';
import { RUN_FILES } from './run-dir.js';
import type { RunData } from './run-dir.js';
import { positionProfile, weightHistogram } from './weight-stats.js';

/** What a figure needs from the report being rendered. */
export interface FigureContext {
  /** draws a spec to SVG (and counts it) */
  chart: (spec: TopLevelSpec) => Promise<string>;
  size: ChartSize;
  /** lines for the reader: missing data */
  warnings: string[];
}

/** The token-weight figures, in page order (a "no data" figure for each when there are no tokens). */
export async function tokenWeightFigures(run: RunData, opts: ReportOptionsResolved, ctx: FigureContext): Promise<string[]> {
  const from = opts.weightsFromStep ?? 0;
  const to = opts.weightsToStep ?? Infinity;
  const ranged = opts.weightsFromStep !== undefined || opts.weightsToStep !== undefined;
  const samples = (run.samples ?? []).filter((s) => s.step >= from && s.step <= to);
  const range = ranged ? ` at steps ${from}–${opts.weightsToStep ?? 'end'}` : '';
  const why = run.samples === null ? `no ${RUN_FILES.samples} in the run directory` : `${RUN_FILES.samples} has no tokens${range}`;
  const hist = weightHistogram(samples, opts.histogramBins);
  const tokenCount = samples.reduce((n, s) => n + s.tokens.length, 0);
  const weightFigures: string[] = [];
  if (hist === null) {
    ctx.warnings.push(`no data for token weights: ${why}`);
    weightFigures.push(figure('weight-histogram', 'Token weights, correct vs wrong rollouts', noData(`token weights (${why})`)));
    weightFigures.push(figure('position-profile', 'Mean token weight against position in the completion', noData(`token weights by position (${why})`)));
  } else {
    const profile = positionProfile(samples, opts.positionBins);
    weightFigures.push(
      figure(
        'weight-histogram',
        'Token weights, correct vs wrong rollouts',
        (await ctx.chart(histogramSpec(hist, ctx.size))) +
          note(`Fraction of each outcome's tokens per weight bin, over ${samples.length} sampled rollouts (${tokenCount} tokens) from ${RUN_FILES.samples}${range || ', all steps'}.`) +
          histogramTable(hist),
      ),
    );
    weightFigures.push(
      figure(
        'position-profile',
        'Mean token weight against position in the completion',
        (await ctx.chart(positionSpec(profile, ctx.size))) +
          note(
            `Token t of a completion of len tokens falls in bin floor(t·${opts.positionBins}/len) of t/len. Each rollout's mean weight per bin is averaged over rollouts of that outcome; the band is ±1 standard error. ${samples.length} sampled rollouts${range || ', all steps'}.`,
          ) +
          positionTable(profile),
      ),
    );
  }
  return weightFigures;
}
