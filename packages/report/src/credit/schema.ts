/**
 * The credit metrics' JSON: every aggregate with its bootstrap interval, the paired tests, and the per-rollout
 * values they come from, so that another tool (tools/credit/check.py, SciPy) can recompute every figure.
 * A value that is undefined (no rollout to average, NaN) is null.
 */
import { z } from 'zod';
import { CreditOptionsSchema, FirstErrorSchema } from './input.js';

const num = z.number().nullable();

/** A mean over rollouts: n rollouts, the sample SD of their values, a 95% percentile-bootstrap CI of the mean. */
const EstimateSchema = z.object({
  n: z.int().nonnegative(),
  mean: num,
  sd: num,
  ci: z.tuple([z.number(), z.number()]).nullable(),
});

/** Two-sided tests of a mean difference of 0: the paired (one-sample) t, and Wilcoxon's signed rank (normal approximation, ties corrected, zeros dropped). */
const PairedTestSchema = z.object({
  t: num,
  df: num,
  pT: num,
  wPlus: num,
  z: num,
  pWilcoxon: num,
  /** the rollouts a paired t needs for 80% power against the observed mean at a two-sided 0.05 (null: no spread or no mean, or beyond 10,000) */
  n80: z.int().nullable(),
});

const WrongMetricsSchema = z.object({
  auroc: EstimateSchema,
  massShare: EstimateSchema,
  tokenShare: EstimateSchema,
  /** massShare - tokenShare, per rollout */
  excess: EstimateSchema,
  before: EstimateSchema,
  on: EstimateSchema,
  after: EstimateSchema,
  /** scored rollouts whose |advantage| is 0 on every token: no mass share */
  zeroMass: z.int().nonnegative(),
});

const ProfileBinSchema = EstimateSchema.extend({
  bin: z.int().nonnegative(),
  /** position range [lo, hi): t / T for the normalised profile; within the segment for the error-relative one */
  lo: z.number(),
  hi: z.number(),
});

const MethodMetricsSchema = z.object({
  name: z.string(),
  /** rollouts whose credit is the advantage over its mean magnitude (sequence advantage 0), all and scored */
  degenerate: z.object({ rollouts: z.int().nonnegative(), scored: z.int().nonnegative() }),
  /** scored wrong rollouts that are not degenerate */
  wrong: WrongMetricsSchema,
  /** the same on the degenerate scored rollouts, reported apart */
  degenerateWrong: WrongMetricsSchema,
  /** mean credit by position relative to the first error: k bins over the prefix, the error line, k bins after */
  errorProfile: z.array(ProfileBinSchema.extend({ segment: z.enum(['before', 'on', 'after']) })),
  /** correct rollouts (not degenerate): mean credit by normalised position */
  correctProfile: z.array(ProfileBinSchema),
  /** the mean credit in the middle of the chain, wrong (by the verifier) against correct, not degenerate */
  midChain: z.object({
    wrong: EstimateSchema,
    correct: EstimateSchema,
    difference: z.object({
      diff: num,
      ci: z.tuple([z.number(), z.number()]).nullable(),
      welch: z.object({ t: num, df: num, p: num }),
    }),
  }),
  /** correct rollouts: mean credit outside the middle minus inside it (> 0 is a U), and its tests against 0 */
  uShape: z.object({ contrast: EstimateSchema, test: PairedTestSchema }),
});

const PairedDifferenceSchema = z.object({
  a: z.string(),
  b: z.string(),
  metric: z.enum(['auroc', 'excess']),
  /** a - b over rollouts scored (and not degenerate) under both */
  difference: EstimateSchema,
  test: PairedTestSchema,
});

const column = z.array(num);

export const CreditReportSchema = z.object({
  format: z.literal('rlvr-credit/1'),
  options: CreditOptionsSchema,
  counts: z.object({
    rollouts: z.int().nonnegative(),
    correct: z.int().nonnegative(),
    wrong: z.int().nonnegative(),
    /** every rollout by status (scored, unlabelled, no_prefix, empty_error, conflict, correct, empty) */
    status: z.record(z.string(), z.int().nonnegative()),
  }),
  methods: z.array(MethodMetricsSchema),
  pairs: z.array(PairedDifferenceSchema),
  rollouts: z.object({
    index: z.array(z.int()),
    group: z.array(z.int()),
    correct: z.array(z.boolean()),
    tokens: z.array(z.int()),
    status: z.array(z.string()),
    label: z.array(FirstErrorSchema.nullable()),
  }),
  /** per method, per rollout (nulls where undefined); profiles are [rollout][bin] */
  values: z.record(
    z.string(),
    z.object({
      degenerate: z.array(z.union([z.literal(0), z.literal(1)])),
      auroc: column,
      massShare: column,
      tokenShare: column,
      before: column,
      on: column,
      after: column,
      middle: column,
      uContrast: column,
      profile: z.array(column),
      errorProfile: z.array(column),
    }),
  ),
});
export type CreditReport = z.infer<typeof CreditReportSchema>;
export type MethodMetrics = z.infer<typeof MethodMetricsSchema>;
export type PairedDifference = z.infer<typeof PairedDifferenceSchema>;
export type Estimate = z.infer<typeof EstimateSchema>;
