import { formatZodIssues } from '@rlvr/core';
import { z } from 'zod';
import { ReportError } from './errors.js';

/** Options of `rlvr report`. */
export const ReportOptionsSchema = z
  .object({
    /** Output file; default `RUN_DIR/report.html`. Its directory must exist. */
    out: z.string().min(1).optional(),
    /** Bins of relative position t/len in the U-shape figure. */
    positionBins: z.int().min(2).max(100).default(20),
    /** Bins of the token-weight histogram. */
    histogramBins: z.int().min(2).max(200).default(40),
    /** Sample completions shown as heatmaps. */
    maxSamples: z.int().min(0).max(500).default(12),
    /** Show samples of this step only (default: the latest steps). */
    sampleStep: z.int().nonnegative().optional(),
    /** Token-weight statistics use samples from this step on (inclusive). */
    weightsFromStep: z.int().nonnegative().optional(),
    /** ... and up to this step (inclusive). */
    weightsToStep: z.int().nonnegative().optional(),
    /** Longer metric curves are averaged into this many points. */
    maxPoints: z.int().min(10).max(100_000).default(1000),
    /** Page title; default the run directory's name. */
    title: z.string().optional(),
  })
  .strict();
export type ReportOptions = z.input<typeof ReportOptionsSchema>;
export type ReportOptionsResolved = z.output<typeof ReportOptionsSchema>;

/** Parse report options, or throw `ReportError('invalid_options')` naming each bad field. */
export function parseReportOptions(options: ReportOptions = {}): ReportOptionsResolved {
  const result = ReportOptionsSchema.safeParse(options);
  if (result.success) return result.data;
  throw new ReportError(
    'invalid_options',
    `invalid report options: ${formatZodIssues(result.error.issues, options)}`,
    {},
    { cause: result.error },
  );
}
