/**
 * Sequential stopping of a comparison: K looks at equally spaced numbers of pairs with the
 * classical O'Brien-Fleming bounds for a two-sided test at overall α = 0.05: at look k of K,
 * stop when |z_k| >= C(K) · sqrt(K / k), C(K) from Jennison & Turnbull (2000), table 2.3 (checked
 * in tools/fixtures/report/scipy_tests.py against SciPy's multivariate normal: overall alpha 0.05 to 3 decimals).
 * Looks at rounded pair counts are only nearly equally spaced; the bounds assume equal spacing. z_k is the paired t
 * statistic mapped to the normal scale through its p: z = Φ⁻¹(1 - p / 2).
 */
import { normalCdf, normalQuantile } from './distributions.js';

/** C(K) for K = 1..5 looks, two-sided α = 0.05. */
const OBF_CONSTANT = [1.96, 1.977, 2.004, 2.024, 2.04] as const;

/** The pairs at each look: round(k · maxPairs / looks), the first at least 2 (a t test needs two pairs). */
export function sequentialLooks(maxPairs: number, looks: number): number[] {
  if (!(looks >= 1 && looks <= OBF_CONSTANT.length && Number.isInteger(looks)))
    throw new RangeError(`sequentialLooks: looks must be an integer from 1 to ${OBF_CONSTANT.length} (got ${looks})`);
  const at = Array.from({ length: looks }, (_, k) => Math.round(((k + 1) * maxPairs) / looks));
  if (at[0]! < 2 || new Set(at).size !== looks)
    throw new RangeError(
      `sequentialLooks: ${looks} looks over ${maxPairs} pairs leave a look with under 2 pairs or two looks at one count`,
    );
  return at;
}

/** The decision at one look. */
export interface SequentialDecision {
  /** 1-based */
  look: number;
  looks: number;
  /** the |z| bound of this look */
  bound: number;
  /** the nominal two-sided p at which this look stops: 2 (1 - Φ(bound)) */
  nominalAlpha: number;
  crossed: boolean;
  /** crossed, or the last look */
  stop: boolean;
}

/** Look `look` (1-based) of `looks` with the primary contrast's two-sided p `p`. */
export function sequentialDecision(look: number, looks: number, p: number): SequentialDecision {
  const c = OBF_CONSTANT[looks - 1];
  if (c === undefined || !(look >= 1 && look <= looks)) throw new RangeError(`sequentialDecision: look ${look} of ${looks}`);
  const bound = c * Math.sqrt(looks / look);
  const nominalAlpha = 2 * (1 - normalCdf(bound));
  const z = p > 0 ? (p >= 1 ? 0 : normalQuantile(1 - p / 2)) : Number.POSITIVE_INFINITY;
  const crossed = z >= bound;
  return { look, looks, bound, nominalAlpha, crossed, stop: crossed || look === looks };
}
