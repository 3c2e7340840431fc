/** The change of a per-problem score between two evaluations of the same problems. */
export interface PairedDifference {
  /** mean over problems of (after - before) */
  mean: number;
  /** its standard error: sample std of the per-problem differences / sqrt(problems) */
  standardError: number;
  problems: number;
}

/**
 * Paired difference of per-problem accuracies (`correct / n`) between two evaluations of the
 * same problems. Pairing removes the problem-to-problem spread, which dominates the noise of
 * either accuracy alone. With one problem the standard error is NaN.
 */
export function pairedDifference(before: readonly number[], after: readonly number[], n: number): PairedDifference {
  if (before.length !== after.length)
    throw new RangeError(`pairedDifference: ${before.length} problems before, ${after.length} after; they must be the same problems`);
  const P = before.length;
  const d = before.map((b, i) => (after[i]! - b) / n);
  const mean = d.reduce((a, x) => a + x, 0) / P;
  const variance = P > 1 ? d.reduce((a, x) => a + (x - mean) ** 2, 0) / (P - 1) : Number.NaN;
  return { mean, standardError: Math.sqrt(variance / P), problems: P };
}
