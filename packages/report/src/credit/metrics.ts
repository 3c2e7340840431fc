/**
 * `creditMetrics`: every method's credit map scored against the first errors of one frozen batch (issue 39),
 * with 95% bootstrap CIs over rollouts and paired differences between methods on the same rollouts.
 *
 * Aggregation: each statistic is a mean over rollouts of a per-rollout value (the AUROC is computed within a
 * rollout, on its own credit scale, then averaged: a "macro" AUROC, each rollout weighing 1 whatever its length);
 * pooling tokens across rollouts would mix the rollouts' scales. CIs: percentile bootstrap over rollouts.
 */
import { pairedT, pairsForPower, welch, wilcoxonNormal } from '../tests.js';
import { differenceCi, drawResamples, estimate, type Resamples } from './bootstrap.js';
import { checkCreditInput, parseCreditOptions, type CreditInput, type CreditOptions, type RolloutStatus } from './input.js';
import { rolloutValues, type RolloutValues } from './per-rollout.js';
import type { CreditReport, MethodMetrics, PairedDifference } from './schema.js';

const STATUSES: readonly RolloutStatus[] = ['scored', 'unlabelled', 'no_prefix', 'empty_error', 'conflict', 'correct', 'empty'];
const PAIRED_METRICS = ['auroc', 'excess'] as const;

/** `x` where `keep[i]`, NaN elsewhere. */
function masked(x: Float64Array, keep: (i: number) => boolean): Float64Array {
  return x.map((v, i) => (keep(i) ? v : Number.NaN));
}

function definedValues(x: Float64Array): number[] {
  return Array.from(x).filter((v) => !Number.isNaN(v));
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** Two-sided tests of mean 0 on the defined values of `d`. */
function pairedTests(d: Float64Array): PairedDifference['test'] {
  const v = definedValues(d);
  const t = v.length >= 2 ? pairedT(v) : null;
  const w = wilcoxonNormal(v);
  return {
    t: t ? finite(t.t) : null,
    df: t ? t.df : null,
    pT: t ? finite(t.p) : null,
    wPlus: v.length > 0 ? w.wPlus : null,
    z: finite(w.z),
    pWilcoxon: finite(w.p),
    n80: t !== null && t.sd > 0 && t.diff !== 0 ? pairsForPower(t.diff, t.sd) : null,
  };
}

function wrongMetrics(v: RolloutValues, keep: (i: number) => boolean, rs: Resamples): MethodMetrics['wrong'] {
  const auroc = masked(v.auroc, keep);
  const massShare = masked(v.massShare, keep);
  const tokenShare = masked(v.tokenShare, keep);
  let zeroMass = 0;
  for (let i = 0; i < rs.B; i++) if (!Number.isNaN(auroc[i]!) && Number.isNaN(massShare[i]!)) zeroMass++;
  return {
    auroc: estimate(auroc, rs),
    massShare: estimate(massShare, rs),
    tokenShare: estimate(tokenShare, rs),
    excess: estimate(
      massShare.map((m, i) => m - tokenShare[i]!),
      rs,
    ),
    before: estimate(masked(v.before, keep), rs),
    on: estimate(masked(v.on, keep), rs),
    after: estimate(masked(v.after, keep), rs),
    zeroMass,
  };
}

/**
 * Score every method of `input` (its rollouts and each method's credit, `|advantage|` and degenerate flags).
 * Wrong rollouts are scored where labelled with at least one token before and one on the error line; every
 * other rollout is counted by status in `counts.status`, never dropped silently. Degenerate rollouts (sequence
 * advantage 0) are scored apart (`degenerateWrong`) and left out of the profiles, the mid-chain comparison,
 * the U shape and the paired differences. Deterministic under `options.seed`.
 */
export function creditMetrics(input: CreditInput, options: CreditOptions = {}): CreditReport {
  const opts = parseCreditOptions(options);
  const { offsets, status } = checkCreditInput(input);
  const { rollouts } = input;
  const B = rollouts.length;
  const rs = drawResamples(B, opts.resamples, opts.seed);
  const K = opts.errorBins;
  const E = 2 * K + 1;
  const perMethod = input.methods.map((m) => ({ m, v: rolloutValues(m, rollouts, status, offsets, opts) }));

  const methods: MethodMetrics[] = perMethod.map(({ m, v }) => {
    const deg = m.degenerate;
    const live = (i: number) => deg[i] === 0;
    const scored = (i: number) => status[i] === 'scored';
    const isCorrect = (i: number) => rollouts[i]!.correct && live(i);
    const isWrong = (i: number) => !rollouts[i]!.correct && live(i);
    const profileRows = (x: Float64Array, stride: number, keep: (i: number) => boolean) => masked(x, (k) => keep(Math.floor(k / stride)));
    const errorRows = profileRows(v.errorProfile, E, (i) => scored(i) && live(i));
    const correctRows = profileRows(v.profile, opts.bins, isCorrect);
    const midWrong = masked(v.middle, isWrong);
    const midCorrect = masked(v.middle, isCorrect);
    const ew = estimate(midWrong, rs);
    const ec = estimate(midCorrect, rs);
    const [vw, vc] = [definedValues(midWrong), definedValues(midCorrect)];
    const w = vw.length >= 2 && vc.length >= 2 ? welch(vw, vc) : null;
    const contrast = masked(v.uContrast, isCorrect);
    let degScored = 0;
    let degAll = 0;
    for (let i = 0; i < B; i++) {
      if (deg[i] === 0) continue;
      degAll++;
      if (scored(i)) degScored++;
    }
    return {
      name: m.name,
      degenerate: { rollouts: degAll, scored: degScored },
      wrong: wrongMetrics(v, (i) => scored(i) && live(i), rs),
      degenerateWrong: wrongMetrics(v, (i) => scored(i) && !live(i), rs),
      errorProfile: Array.from({ length: E }, (_, b) => {
        const segment = b < K ? ('before' as const) : b === K ? ('on' as const) : ('after' as const);
        const j = b < K ? b : b === K ? 0 : b - K - 1;
        const span = b === K ? 1 : K;
        return { segment, bin: b, lo: j / span, hi: (j + 1) / span, ...estimate(errorRows, rs, E, b) };
      }),
      correctProfile: Array.from({ length: opts.bins }, (_, b) => ({
        bin: b,
        lo: b / opts.bins,
        hi: (b + 1) / opts.bins,
        ...estimate(correctRows, rs, opts.bins, b),
      })),
      midChain: {
        wrong: ew,
        correct: ec,
        difference: {
          diff: ew.mean !== null && ec.mean !== null ? ew.mean - ec.mean : null,
          ci: differenceCi(midWrong, midCorrect, rs),
          welch: { t: w ? finite(w.t) : null, df: w ? finite(w.df) : null, p: w ? finite(w.p) : null },
        },
      },
      uShape: { contrast: estimate(contrast, rs), test: pairedTests(contrast) },
    };
  });

  const pairs: PairedDifference[] = [];
  for (let a = 0; a < perMethod.length; a++) {
    for (let b = a + 1; b < perMethod.length; b++) {
      const A = perMethod[a]!;
      const Bm = perMethod[b]!;
      const both = (i: number) => status[i] === 'scored' && A.m.degenerate[i] === 0 && Bm.m.degenerate[i] === 0;
      for (const metric of PAIRED_METRICS) {
        const value = (x: RolloutValues) => (metric === 'auroc' ? x.auroc : x.massShare.map((m, i) => m - x.tokenShare[i]!));
        const va = value(A.v);
        const vb = value(Bm.v);
        const d = masked(
          va.map((x, i) => x - vb[i]!),
          both,
        );
        pairs.push({ a: A.m.name, b: Bm.m.name, metric, difference: estimate(d, rs), test: pairedTests(d) });
      }
    }
  }

  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<RolloutStatus, number>;
  for (const s of status) counts[s]++;
  const nulls = (x: Float64Array) => Array.from(x, (y) => (Number.isNaN(y) ? null : y));
  const rows = (x: Float64Array, stride: number) => Array.from({ length: B }, (_, i) => nulls(x.subarray(i * stride, (i + 1) * stride)));
  const correct = rollouts.filter((r) => r.correct).length;
  return {
    format: 'rlvr-credit/1',
    options: opts,
    counts: { rollouts: B, correct, wrong: B - correct, status: counts },
    methods,
    pairs,
    rollouts: {
      index: rollouts.map((r) => r.index),
      group: rollouts.map((r) => r.group),
      correct: rollouts.map((r) => r.correct),
      tokens: rollouts.map((r) => r.tokens),
      status,
      label: rollouts.map((r) => (typeof r.label === 'object' ? { ...r.label } : null)),
    },
    values: Object.fromEntries(
      perMethod.map(({ m, v }) => [
        m.name,
        {
          degenerate: Array.from(m.degenerate, (x) => (x === 0 ? 0 : 1) as 0 | 1),
          auroc: nulls(v.auroc),
          massShare: nulls(v.massShare),
          tokenShare: nulls(v.tokenShare),
          before: nulls(v.before),
          on: nulls(v.on),
          after: nulls(v.after),
          middle: nulls(v.middle),
          uContrast: nulls(v.uContrast),
          profile: rows(v.profile, opts.bins),
          errorProfile: rows(v.errorProfile, E),
        },
      ]),
    ),
  };
}
