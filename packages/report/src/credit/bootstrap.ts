/**
 * The bootstrap over rollouts. One set of R resamples of the B rollouts is drawn once (seeded) and stored as
 * counts [R, B]; every statistic's resampled value is then its count-weighted mean over the rollouts where
 * it is defined. Sharing the resamples makes differences between methods (and between outcomes) pair up,
 * and costs one pass over the defined rollouts per resample: no index arrays, no copies.
 */
import { Rng } from '@rlvr/core';
import type { Estimate } from './schema.js';

export interface Resamples {
  /** resamples */
  R: number;
  /** rollouts */
  B: number;
  /** [R * B] how often rollout i is drawn in resample r */
  counts: Uint16Array;
}

/** R resamples with replacement of B rollouts, from `seed`. */
export function drawResamples(B: number, R: number, seed: number): Resamples {
  const rng = new Rng(`credit-bootstrap:${seed}`);
  const counts = new Uint16Array(R * B);
  for (let r = 0; r < R; r++) {
    const row = r * B;
    for (let k = 0; k < B; k++) counts[row + rng.int(B)]!++;
  }
  return { R, B, counts };
}

/** The q-quantile of sorted values, linear between order statistics (NumPy's default). */
function quantileSorted(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** The defined (non-NaN) entries of `x` at `stride`/`offset` (a column of a [B, stride] matrix). */
function defined(x: Float64Array, stride: number, offset: number, B: number): { idx: Int32Array; val: Float64Array } {
  let n = 0;
  for (let i = 0; i < B; i++) if (!Number.isNaN(x[i * stride + offset]!)) n++;
  const idx = new Int32Array(n);
  const val = new Float64Array(n);
  n = 0;
  for (let i = 0; i < B; i++) {
    const v = x[i * stride + offset]!;
    if (Number.isNaN(v)) continue;
    idx[n] = i;
    val[n++] = v;
  }
  return { idx, val };
}

/** [R] the resampled means of a column; NaN in a resample that drew none of its rollouts. */
function resampledMeans(col: { idx: Int32Array; val: Float64Array }, rs: Resamples): Float64Array {
  const out = new Float64Array(rs.R);
  const { idx, val } = col;
  for (let r = 0; r < rs.R; r++) {
    const row = r * rs.B;
    let s = 0;
    let w = 0;
    for (let k = 0; k < idx.length; k++) {
      const c = rs.counts[row + idx[k]!]!;
      s += c * val[k]!;
      w += c;
    }
    out[r] = w > 0 ? s / w : Number.NaN;
  }
  return out;
}

function percentileCi(draws: Float64Array): [number, number] | null {
  const finite = draws.filter((d) => !Number.isNaN(d)).sort();
  if (finite.length === 0) return null;
  return [quantileSorted(finite, 0.025), quantileSorted(finite, 0.975)];
}

/** The mean over rollouts of column `offset` of `x` [B, stride], with its SD and bootstrap CI. */
export function estimate(x: Float64Array, rs: Resamples, stride = 1, offset = 0): Estimate {
  const col = defined(x, stride, offset, rs.B);
  const n = col.val.length;
  if (n === 0) return { n, mean: null, sd: null, ci: null };
  let s = 0;
  for (const v of col.val) s += v;
  const mean = s / n;
  let ss = 0;
  for (const v of col.val) ss += (v - mean) ** 2;
  return { n, mean, sd: n > 1 ? Math.sqrt(ss / (n - 1)) : null, ci: percentileCi(resampledMeans(col, rs)) };
}

/** The difference of two means over disjoint sets of rollouts (a - b), with its bootstrap CI on the shared resamples. */
export function differenceCi(a: Float64Array, b: Float64Array, rs: Resamples): [number, number] | null {
  const da = resampledMeans(defined(a, 1, 0, rs.B), rs);
  const db = resampledMeans(defined(b, 1, 0, rs.B), rs);
  return percentileCi(da.map((v, r) => v - db[r]!));
}
