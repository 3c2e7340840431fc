/**
 * The names of every metric rlvr writes to a run's `metrics.jsonl`, in one place, so that the
 * writers (`@rlvr/trainer`, `@rlvr/advantages`, `rlvr train`, `rlvr pretrain`) and the readers
 * (`@rlvr/report`, `rlvr compare`) agree by type, not by a string typed twice or a regex.
 *
 * A `metrics.jsonl` line is `{"step": N, NAME: number | null, ...}`; any metric may be absent on
 * a step (eval metrics appear on eval steps only). Names follow TRL / verl where one exists
 * (`reward/mean`, `frac_reward_zero_std`, `completions/mean_length`, `clip/high_frac`).
 */

/** Fixed metric names, with who writes each. */
export const METRIC = {
  // --- rollouts (@rlvr/trainer `batchMetrics`, every RL step) ---
  /** Mean reward of the step's rollouts. */
  rewardMean: 'reward/mean',
  /** Sample standard deviation of the step's rewards (0 for one rollout); the report's band around `reward/mean`. */
  rewardStd: 'reward/std',
  /** Fraction of groups whose rewards have zero spread (no learning signal under a group baseline). */
  fracRewardZeroStd: 'frac_reward_zero_std',
  /** Mean completion length in tokens. */
  completionsMeanLength: 'completions/mean_length',
  /** Shortest completion of the step, in tokens. */
  completionsMinLength: 'completions/min_length',
  /** Longest completion of the step, in tokens. */
  completionsMaxLength: 'completions/max_length',
  /** Fraction of completions cut by the token limit (finish `length`). */
  completionsClippedRatio: 'completions/clipped_ratio',

  // --- the policy update (@rlvr/trainer `Trainer.step`) ---
  /** Clipped-surrogate policy loss, mean over updates. */
  lossPolicy: 'loss/policy',
  /** Supervised cross-entropy on completion tokens (`rlvr pretrain`). */
  lossSft: 'loss/sft',
  /** Fraction of tokens whose ratio was clipped below `1 - epsLow` (with a negative advantage). */
  clipLowFrac: 'clip/low_frac',
  /** Fraction of tokens whose ratio was clipped above `1 + epsHigh` (with a positive advantage). */
  clipHighFrac: 'clip/high_frac',
  /** k3 estimate of KL(old || current) over the step's tokens. */
  klApprox: 'kl/approx',
  /** KL to the reference model, only with a KL penalty. */
  klRef: 'kl/ref',
  /** Mean token entropy of the current policy. */
  entropy: 'entropy',
  /** Gradient norm before clipping, mean over updates. */
  gradNorm: 'grad_norm',
  /** Learning rate of the step's last update. */
  lr: 'lr',
  /** Trained tokens per second of the update. */
  tokensPerS: 'tokens_per_s',
  /** Optimizer updates applied this step (mini-batches x epochs). */
  optimizerSteps: 'optimizer_steps',
  /** Updates skipped for a non-finite gradient. */
  skippedUpdates: 'skipped_updates',
  /** Rollouts masked out for being truncated (`maskTruncated`). */
  filterMaskedTruncated: 'filter/masked_truncated',
  /** Rollouts left out because their group had zero reward spread (`filterZeroStd`). */
  filterZeroStdRollouts: 'filter/zero_std_rollouts',
  /** Rollouts left out because sampling failed (finish `error`). */
  filterErrored: 'filter/errored',
  /** Rollouts that entered the update. */
  trainedRollouts: 'trained_rollouts',
  /** Index of the first parameter with a non-finite value, on a step that had one. */
  firstNonfiniteParamIndex: 'first_nonfinite_param_index',
  /** Times the token advantages were recomputed with the current parameters during the update (`StepOptions.refresh`). */
  refreshCount: 'refresh/count',
  /** How much those recomputations moved the advantages: sum |refreshed - batch-level| / sum |batch-level| over their tokens. */
  refreshChange: 'refresh/advantage_change',

  // --- a method's rollout stage (`@rlvr/rollout`'s `resampleGroups`; steps of a method with one) ---
  /** Fraction of the step's groups re-sampled on another prompt (SCOPE-RL: on their scaffold). */
  routingFraction: 'routing/fraction',
  /** Mean verifier reward of the re-sampled groups' first rollouts, before routing (NaN when none is). */
  routingRewardBefore: 'routing/reward_before',
  /** Mean reward of their replacement rollouts, after routing (NaN when none is). */
  routingRewardAfter: 'routing/reward_after',
  /** Mean reward of the step's first rollouts, before routing (`reward/mean` is the trained batch's). */
  routingRewardMeanBefore: 'routing/reward_mean_before',
  /** Mean reward of the trained batch after a stage's `regrade` (SCOPE-RL stage 2); the other `routing/*` rewards are before it. */
  routingRewardMeanRegraded: 'routing/reward_mean_regraded',

  // --- held-out evaluation (`rlvr train`, `rlvr pretrain`; eval steps only, step 0 = the starting checkpoint) ---
  /** Mean over held-out problems of correct / n (sampled); `rlvr pretrain`: greedy accuracy. */
  accuracy: 'accuracy',
  /** Greedy (temperature 0) held-out accuracy. */
  accuracyGreedy: 'accuracy/greedy',
  /** Mean sampled completion length on the held-out problems, in tokens. */
  evalMeanTokens: 'eval/mean_tokens',
  /** Fraction of held-out samples cut by the token limit. */
  evalTruncated: 'eval/truncated',
  /** Wall-clock seconds of the held-out evaluation (sampled, greedy and credit maps; `rlvr train`). */
  timeEval: 'time/eval_s',
  /** Fraction of greedy held-out completions that ended at EOS (`rlvr pretrain`). */
  evalFinished: 'eval/finished',

  // --- wall-clock seconds of the parts of an RL step (`rlvr train`) ---
  /** The whole step: sample, verify, signals, advantages, update (evaluation excluded). */
  timeStep: 'time/step_s',
  /** Sampling the completions. */
  timeSample: 'time/sample_s',
  /** Grading them. */
  timeVerify: 'time/verify_s',
  /** Routing: a method's rollout stage deciding, re-sampling and grading its groups. */
  timeRoute: 'time/route_s',
  /** Computing the signals the estimator needs (log-probs, saliency). */
  timeSignals: 'time/signals_s',
  /** Estimating the advantages. */
  timeAdvantages: 'time/advantages_s',
  /** The policy update (advantage refreshes included). */
  timeUpdate: 'time/update_s',
  /** The advantage refreshes inside the update (`StepOptions.refresh`). */
  timeRefresh: 'time/refresh_s',
  /**
   * With policy workers: the weight sync, writing the parameters to the shared buffer plus the
   * slowest replica's re-load from it; over the update in `Trainer.step`'s metrics, over the
   * whole step (sampling and signals included) in `rlvr train`'s.
   */
  timeWeightSync: 'time/weight_sync_s',
  /** With policy workers: summing the workers' gradients into tensors on the calling thread, over the update. */
  timeGradReduce: 'time/grad_reduce_s',
} as const;

/** One of the fixed metric names. */
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/**
 * Name prefixes of the metric families: `loss/policy` and `loss/sft` are both in `loss`. A chart
 * or a filter by family reads these, never a hand-written pattern.
 */
export const METRIC_FAMILY = {
  reward: 'reward/',
  accuracy: 'accuracy/',
  loss: 'loss/',
  kl: 'kl/',
  clip: 'clip/',
  completions: 'completions/',
  filter: 'filter/',
  eval: 'eval/',
  time: 'time/',
  refresh: 'refresh/',
  routing: 'routing/',
  /** token-weight statistics by outcome: `weights/OUTCOME/STAT` (see `weightMetric`) */
  weights: 'weights/',
  /** an estimator's other metrics under their own key: `adv/fallback_rate` (see `estimatorMetricName`) */
  adv: 'adv/',
} as const;

/** Whether `name` belongs to `family` (its bare name, e.g. `entropy`, or anything under `entropy/`). */
export function inMetricFamily(name: string, family: keyof typeof METRIC_FAMILY): boolean {
  const prefix = METRIC_FAMILY[family];
  return name.startsWith(prefix) || name === prefix.slice(0, -1);
}

/** Which rollouts a token-weight statistic covers: all of them, those with reward > 0, the others. */
export const WEIGHT_OUTCOMES = ['all', 'correct', 'wrong'] as const;
export type WeightOutcome = (typeof WEIGHT_OUTCOMES)[number];

/** The token-weight statistics an estimator reports per outcome (std is the population std over tokens). */
export const WEIGHT_STATS = ['mean', 'std', 'min', 'max'] as const;
export type WeightStat = (typeof WEIGHT_STATS)[number];

/** `metrics.jsonl` name of a token-weight statistic: `weights/correct/mean`. */
export function weightMetric(outcome: WeightOutcome, stat: WeightStat): `weights/${WeightOutcome}/${WeightStat}` {
  return `weights/${outcome}/${stat}`;
}

/**
 * The key under which an estimator (`AdvantageEstimator.estimate` of `@rlvr/advantages`) reports a
 * token-weight statistic: `weight_mean` for all rollouts, `weight_mean_correct`, `weight_mean_wrong`.
 */
export function estimatorWeightKey(outcome: WeightOutcome, stat: WeightStat): string {
  return outcome === 'all' ? `weight_${stat}` : `weight_${stat}_${outcome}`;
}

/**
 * Other estimator metric keys (the ones `@rlvr/advantages` documents); in `metrics.jsonl` they are
 * `adv/KEY` (`estimatorMetricName`). Third-party estimators may report more keys.
 */
export const ESTIMATOR_METRIC = {
  /** groups present in the batch */
  numGroups: 'num_groups',
  numRollouts: 'num_rollouts',
  /** rollouts in groups of one or with equal rewards (advantage 0) */
  fracRewardZeroStd: 'frac_reward_zero_std',
  /** token-mean |A| before weighting */
  advantageAbsMeanRaw: 'advantage_abs_mean_raw',
  /** token-mean |A| after weighting */
  advantageAbsMean: 'advantage_abs_mean',
  /** their ratio: token-mean |A w| over token-mean |A| (NaN when every A is 0) */
  advantageScaleRatioTokens: 'advantage_scale_ratio_tokens',
  /** rollout-mean |A| before weighting (the GRAIL reference's `advantages_raw_abs_mean`) */
  advantageAbsMeanRawRollouts: 'advantage_abs_mean_raw_rollouts',
  /** the GRAIL reference's `advantages_scale_ratio`: token-mean |A w| over (rollout-mean |A| + 1e-8) */
  advantagesScaleRatio: 'advantages_scale_ratio',
  /** rollouts without a final answer (weight 1 throughout) */
  fallbackRate: 'fallback_rate',
  answerFoundRate: 'answer_found_rate',
  /** GRAIL: rollouts not weighted because of `symmetry` */
  excludedRate: 'excluded_rate',
  /** GRAIL: weighted tokens at or past `wMin` / `wMax` (`<=`, `>=`, as the reference counts), before the span overrides */
  clipFracMin: 'clip_frac_min',
  clipFracMax: 'clip_frac_max',
  /** OAR-G: tokens below the tau threshold */
  fracBelowThreshold: 'frac_below_threshold',
  /** REINFORCE++-baseline: the batch whitening statistics */
  whitenMean: 'whiten_mean',
  whitenStd: 'whiten_std',
  /** GRPO with `scaleRewards: "batch"`: the std of every reward of the batch */
  rewardStdBatch: 'reward_std_batch',
} as const;

const ESTIMATOR_WEIGHT_KEY = new Map<string, string>(
  WEIGHT_OUTCOMES.flatMap((o) => WEIGHT_STATS.map((s) => [estimatorWeightKey(o, s), weightMetric(o, s)] as const)),
);

/**
 * The `metrics.jsonl` name of an estimator metric key: a token-weight statistic goes to
 * `weights/OUTCOME/STAT` (`weight_mean_correct` -> `weights/correct/mean`, `weight_std` ->
 * `weights/all/std`), any other key to `adv/KEY`.
 */
export function estimatorMetricName(key: string): string {
  return ESTIMATOR_WEIGHT_KEY.get(key) ?? `${METRIC_FAMILY.adv}${key}`;
}

/** An estimator's metrics under their `metrics.jsonl` names (`estimatorMetricName` of each key). */
export function estimatorMetrics(m: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [estimatorMetricName(k), v]));
}

/** `pass@N`: the unbiased pass@n of the held-out evaluation with n samples per problem (eval steps only). */
export function passAtMetric(n: number): `pass@${number}` {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`passAtMetric: n must be a positive integer, got ${n}`);
  return `pass@${n}`;
}

/** The n of a `pass@N` metric name; `undefined` for any other name. */
export function passAtMetricN(name: string): number | undefined {
  const m = /^pass@([1-9]\d*)$/.exec(name);
  return m === null ? undefined : Number(m[1]);
}
