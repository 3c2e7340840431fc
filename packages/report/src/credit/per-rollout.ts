/**
 * The per-rollout values of one method's credit map. Every value is a Float64Array over the B rollouts, NaN where
 * it is undefined for a rollout (a correct rollout has no error line, a scored one no U contrast). A rollout
 * counts once whatever its length: the aggregates are means of these values over rollouts.
 */
import type { MethodCredit } from './credit-map.js';
import type { CreditOptionsResolved, CreditRollout, RolloutStatus } from './input.js';

export interface RolloutValues {
  /** P(credit of an error-line token > credit of a prefix token), ties 1/2 (scored rollouts) */
  auroc: Float64Array;
  /** share of the rollout's |advantage| on the error line and after (scored, with some |advantage|) */
  massShare: Float64Array;
  /** share of its tokens there: (T - tokenStart) / T, where `massShare` is defined */
  tokenShare: Float64Array;
  /** mean credit on the prefix, the error line and the tokens after it (scored; `after` NaN when none) */
  before: Float64Array;
  on: Float64Array;
  after: Float64Array;
  /** [B * errorBins(2k + 1)] mean credit per error-relative bin: k over the prefix, the error line, k after */
  errorProfile: Float64Array;
  /** [B * bins] mean credit per normalised-position bin (every rollout with tokens) */
  profile: Float64Array;
  /** mean credit in the middle of the chain, and outside it minus inside it (every rollout with tokens there) */
  middle: Float64Array;
  uContrast: Float64Array;
}

function meanOf(x: Float32Array, s: number, e: number): number {
  if (e <= s) return Number.NaN;
  let sum = 0;
  for (let t = s; t < e; t++) sum += x[t]!;
  return sum / (e - s);
}

/**
 * The Mann-Whitney AUROC of `pos` against `neg`: the share of pairs with pos > neg, ties 1/2. Both are sorted
 * in place; U is an exact half-integer count, so the result is U / (n1 n2) rounded once.
 */
export function auroc(pos: Float32Array, neg: Float32Array): number {
  pos.sort();
  neg.sort();
  let below = 0; // negatives < current positive
  let equal = 0; // negatives == current positive
  let u2 = 0; // 2U
  let j = 0;
  for (let i = 0; i < pos.length; i++) {
    const v = pos[i]!;
    if (i > 0 && v === pos[i - 1]) {
      u2 += 2 * below + equal;
      continue;
    }
    while (j < neg.length && neg[j]! < v) j++;
    below = j;
    let k = j;
    while (k < neg.length && neg[k] === v) k++;
    equal = k - j;
    u2 += 2 * below + equal;
  }
  return u2 / 2 / (pos.length * neg.length);
}

export function rolloutValues(
  method: MethodCredit,
  rollouts: readonly CreditRollout[],
  status: readonly RolloutStatus[],
  offsets: Int32Array,
  options: CreditOptionsResolved,
): RolloutValues {
  const B = rollouts.length;
  const K = options.errorBins;
  const E = 2 * K + 1;
  const { bins } = options;
  const nan = (n: number) => new Float64Array(n).fill(Number.NaN);
  const v: RolloutValues = {
    auroc: nan(B),
    massShare: nan(B),
    tokenShare: nan(B),
    before: nan(B),
    on: nan(B),
    after: nan(B),
    errorProfile: nan(B * E),
    profile: nan(B * bins),
    middle: nan(B),
    uContrast: nan(B),
  };
  const { credit, absAdvantage } = method;
  const [midLo, midHi] = options.middle;
  const binSum = new Float64Array(Math.max(bins, E));
  const binCount = new Int32Array(Math.max(bins, E));
  for (let i = 0; i < B; i++) {
    const o = offsets[i]!;
    const T = offsets[i + 1]! - o;
    if (T === 0) continue;
    // normalised position: t / T, bin floor(t * bins / T) (the report's U-shape convention)
    binSum.fill(0);
    binCount.fill(0);
    let inSum = 0;
    let inN = 0;
    let outSum = 0;
    let outN = 0;
    for (let t = 0; t < T; t++) {
      const c = credit[o + t]!;
      const b = Math.floor((t * bins) / T);
      binSum[b]! += c;
      binCount[b]!++;
      const p = t / T;
      if (p >= midLo && p < midHi) {
        inSum += c;
        inN++;
      } else {
        outSum += c;
        outN++;
      }
    }
    for (let b = 0; b < bins; b++) if (binCount[b]! > 0) v.profile[i * bins + b] = binSum[b]! / binCount[b]!;
    if (inN > 0) {
      v.middle[i] = inSum / inN;
      if (outN > 0) v.uContrast[i] = outSum / outN - inSum / inN;
    }
    if (status[i] !== 'scored') continue;
    const label = rollouts[i]!.label as { tokenStart: number; tokenEnd: number };
    const s = label.tokenStart;
    const e = label.tokenEnd;
    v.auroc[i] = auroc(credit.slice(o + s, o + e), credit.slice(o, o + s));
    let tail = 0;
    let mass = 0;
    for (let t = 0; t < T; t++) {
      const a = absAdvantage[o + t]!;
      mass += a;
      if (t >= s) tail += a;
    }
    // sums of float32 values in float64 are exact for any realistic T, so equal |advantage| gives exactly the token share
    if (mass > 0) {
      v.massShare[i] = tail / mass;
      v.tokenShare[i] = (T - s) / T;
    }
    v.before[i] = meanOf(credit, o, o + s);
    v.on[i] = meanOf(credit, o + s, o + e);
    v.after[i] = meanOf(credit, o + e, o + T);
    // error-relative bins: the prefix t in [0, s) at floor(t K / s), the error line at K, the rest at K + 1 + floor((t - e) K / (T - e))
    binSum.fill(0);
    binCount.fill(0);
    for (let t = 0; t < T; t++) {
      const b = t < s ? Math.floor((t * K) / s) : t < e ? K : K + 1 + Math.floor(((t - e) * K) / (T - e));
      binSum[b]! += credit[o + t]!;
      binCount[b]!++;
    }
    for (let b = 0; b < E; b++) if (binCount[b]! > 0) v.errorProfile[i * E + b] = binSum[b]! / binCount[b]!;
  }
  return v;
}
