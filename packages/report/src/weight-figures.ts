/**
 * The figures of the token weights in `samples.jsonl` (optionally a step range of it): the
 * histogram of weights by outcome and the mean weight against position (the U-shape). Each is a
 * chart with a note and its numbers; a new figure of the weights goes here, as one more entry.
 */
import type { TopLevelSpec } from 'vega-lite';
import { checkpointProfileSpec, histogramSpec, positionSpec } from './charts.js';
import { reasoningProfiles } from './checkpoint-stats.js';
import { renderCheckpointHeatmaps, renderLegend } from './heatmap.js';
import type { ChartSize } from './charts.js';
import type { ReportOptionsResolved } from './options.js';
import { cell, figure, histogramTable, noData, note, positionTable } from './report-parts.js';
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
    weightFigures.push(
      figure(
        'position-profile',
        'Whole completion: mean token weight against t/len (answer content forced to w_max, post-answer tokens included)',
        noData(`token weights by position (${why})`),
      ),
    );
  } else {
    const profile = positionProfile(samples, opts.positionBins);
    weightFigures.push(
      figure(
        'weight-histogram',
        'Token weights, correct vs wrong rollouts',
        (await ctx.chart(histogramSpec(hist, ctx.size))) +
          note(
            `Fraction of each outcome's tokens per weight bin, over ${samples.length} sampled rollouts (${tokenCount} tokens) from ${RUN_FILES.samples}${range || ', all steps'}.`,
          ) +
          histogramTable(hist),
      ),
    );
    weightFigures.push(
      figure(
        'position-profile',
        'Whole completion: mean token weight against t/len (answer content forced to w_max, post-answer tokens included)',
        (await ctx.chart(positionSpec(profile, ctx.size))) +
          note(
            `The training rollouts' weights as trained on, over the whole completion: token t of a completion of len tokens falls in bin floor(t·${opts.positionBins}/len) of t/len. The answer content is set to w_max and the delimiters and post-answer tokens to w_mean by GRAIL's overrides, so the right end rises by construction; the reasoning-only figure of the GRAIL reference is below. Each rollout's mean weight per bin is averaged over rollouts of that outcome; the band is ±1 standard error. ${samples.length} sampled rollouts${range || ', all steps'}.`,
          ) +
          positionTable(profile),
      ),
    );
  }
  return weightFigures;
}

/**
 * The GRAIL reference's figures over checkpoints, from `checkpoint-weights.jsonl`: the reasoning-token
 * U-shape per checkpoint and the token heatmap of the same rollouts at every checkpoint.
 */
export async function checkpointFigures(run: RunData, opts: ReportOptionsResolved, ctx: FigureContext): Promise<string[]> {
  const records = run.checkpointWeights ?? [];
  const file = RUN_FILES.checkpointWeights;
  if (records.length === 0) {
    const why =
      run.checkpointWeights == null
        ? `no ${file} in the run directory (rlvr train writes it at every held-out evaluation)`
        : `${file} is empty`;
    ctx.warnings.push(`no data for the weights over checkpoints: ${why}`);
    return [
      figure(
        'checkpoint-profile',
        'Reasoning tokens: mean GRAIL weight against t/(R−1), per checkpoint',
        noData(`weights over checkpoints (${why})`),
      ),
    ];
  }
  const profiles = reasoningProfiles(records, opts.positionBins);
  const head = `<tr><th>step</th><th>rollouts</th><th>left out</th>${profiles[0]!.bins.map((b) => `<th>${b.lo.toFixed(2)}–${b.hi.toFixed(2)}</th>`).join('')}</tr>`;
  const rows = profiles.map(
    (p) => `<tr data-step="${p.step}">${cell(p.step)}${cell(p.rollouts)}${cell(p.skipped)}${p.bins.map((b) => cell(b.mean)).join('')}</tr>`,
  );
  const heat = renderCheckpointHeatmaps(records, opts.maxSamples);
  return [
    figure(
      'checkpoint-profile',
      'Reasoning tokens: mean GRAIL weight against t/(R−1), per checkpoint',
      (await ctx.chart(checkpointProfileSpec(profiles, ctx.size))) +
        note(
          `As the GRAIL reference's compute_checkpoint_stats.py: the GRAIL weights (symmetry both) of the same ${new Set(records.map((r) => r.rollout)).size} evaluation rollouts, recomputed with each checkpoint's parameters (${file}); only the R reasoning tokens before the first \\boxed{ are pooled, token t at t/(R−1), in ${opts.positionBins} bins (the box and everything after it are left out, and so are rollouts without a box or with R < 2). Each point is the mean over all tokens of the bin.`,
        ) +
        `<details class="data"><summary>data</summary><table data-table="checkpoint-profile">${head}${rows.join('')}</table></details>`,
    ),
    figure(
      'checkpoint-heatmap',
      'The same evaluation rollouts at every checkpoint',
      renderLegend(heat.scale) +
        note(
          `${heat.shown} of the rollouts of ${file}, one line per checkpoint: the GRAIL weight (symmetry both) of each token with that checkpoint's parameters.`,
        ) +
        heat.html,
    ),
  ];
}
