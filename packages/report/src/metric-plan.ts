/**
 * Which metric goes on which chart. Metrics are recognised by `@rlvr/core`'s names (`METRIC`,
 * `METRIC_FAMILY`, `weightMetric`, `passAtMetricN`), never by a pattern of our own: a family
 * shares a chart (all `loss/*` together, `clip/low_frac` with `clip/high_frac`, the token-weight
 * statistics by outcome), and every other metric gets a chart of its own in "Other metrics".
 */
import { METRIC, WEIGHT_OUTCOMES, WEIGHT_STATS, inMetricFamily, passAtMetricN, weightMetric } from '@rlvr/core';
import type { WeightOutcome } from '@rlvr/core';

export type SectionId = 'reward' | 'optimisation' | 'rollouts' | 'weights' | 'other';

/** One chart of metric curves against the optimizer step. */
export interface MetricChart {
  /** Stable id, used for the `data-chart` attribute of the figure. */
  id: string;
  section: SectionId;
  title: string;
  /** The y-axis title: short, with the unit where there is one. */
  yTitle: string;
  /** The metrics are fractions: the axis reads in percent. */
  percent?: boolean;
  /** Metric names drawn as series, in legend order. */
  metrics: string[];
  /** For the reward chart: the metric drawn as a ±band around the first series. */
  band?: string;
}

interface Family {
  id: string;
  section: SectionId;
  title: string;
  yTitle: string;
  percent?: boolean;
  match: (name: string) => boolean;
}

const is =
  (...names: string[]) =>
  (n: string): boolean =>
    names.includes(n);
/** A metric and its sub-metrics (`entropy`, `entropy/...`). */
const under =
  (name: string) =>
  (n: string): boolean =>
    n === name || n.startsWith(`${name}/`);

const FAMILIES: readonly Family[] = [
  { id: 'reward', section: 'reward', title: 'Reward (mean ± std over rollouts)', yTitle: 'reward', match: is(METRIC.rewardMean) },
  {
    id: 'accuracy',
    section: 'reward',
    title: 'Held-out accuracy',
    yTitle: 'held-out accuracy',
    percent: true,
    match: (n) => inMetricFamily(n, 'accuracy') || passAtMetricN(n) !== undefined,
  },
  {
    id: 'reward-other',
    section: 'reward',
    title: 'Other reward statistics',
    yTitle: 'reward',
    match: (n) => inMetricFamily(n, 'reward') && n !== METRIC.rewardStd,
  },
  { id: 'loss', section: 'optimisation', title: 'Loss', yTitle: 'loss', match: (n) => inMetricFamily(n, 'loss') },
  { id: 'kl', section: 'optimisation', title: 'KL divergence', yTitle: 'KL (nats)', match: (n) => inMetricFamily(n, 'kl') },
  { id: 'entropy', section: 'optimisation', title: 'Entropy', yTitle: 'entropy (nats)', match: under(METRIC.entropy) },
  {
    id: 'clip',
    section: 'optimisation',
    title: 'Clipped token fractions',
    yTitle: 'fraction of tokens',
    percent: true,
    match: (n) => inMetricFamily(n, 'clip'),
  },
  { id: 'grad_norm', section: 'optimisation', title: 'Gradient norm', yTitle: 'gradient norm', match: under(METRIC.gradNorm) },
  { id: 'lr', section: 'optimisation', title: 'Learning rate', yTitle: 'learning rate', match: under(METRIC.lr) },
  {
    id: 'frac_reward_zero_std',
    section: 'rollouts',
    title: 'Fraction of groups with zero reward std',
    yTitle: 'fraction of groups',
    percent: true,
    match: is(METRIC.fracRewardZeroStd),
  },
  {
    id: 'completions',
    section: 'rollouts',
    title: 'Completion length',
    yTitle: 'tokens',
    match: (n) => inMetricFamily(n, 'completions') && n !== METRIC.completionsClippedRatio,
  },
  {
    id: 'completions-clipped',
    section: 'rollouts',
    title: 'Completions cut by the token limit',
    yTitle: 'fraction of completions',
    percent: true,
    match: is(METRIC.completionsClippedRatio),
  },
  { id: 'tokens_per_s', section: 'rollouts', title: 'Throughput (tokens / s)', yTitle: 'tokens / s', match: is(METRIC.tokensPerS) },
  { id: 'time', section: 'rollouts', title: 'Wall time per step', yTitle: 'seconds', match: (n) => inMetricFamily(n, 'time') },
];

/** Plan the metric charts for a run whose metrics are `names`. Charts are in section order. */
export function planMetricCharts(names: readonly string[]): MetricChart[] {
  const charts: MetricChart[] = [];
  const placed = new Set<string>();
  const has = new Set(names);
  for (const f of FAMILIES) {
    const metrics = names.filter((n) => !placed.has(n) && f.match(n));
    if (metrics.length === 0) continue;
    if (f.id === 'accuracy') metrics.sort((a, b) => heldOutRank(a) - heldOutRank(b));
    for (const m of metrics) placed.add(m);
    const chart: MetricChart = {
      id: f.id,
      section: f.section,
      title: f.title,
      yTitle: f.yTitle,
      metrics,
      ...(f.percent ? { percent: true } : {}),
    };
    if (f.id === 'reward' && has.has(METRIC.rewardStd)) {
      chart.band = METRIC.rewardStd;
      placed.add(METRIC.rewardStd);
    }
    charts.push(chart);
  }
  // reward/std without reward/mean is just another reward statistic.
  if (has.has(METRIC.rewardStd) && !placed.has(METRIC.rewardStd)) {
    charts.push({ id: 'reward-std', section: 'reward', title: 'Reward std', yTitle: 'reward std', metrics: [METRIC.rewardStd] });
    placed.add(METRIC.rewardStd);
  }
  // Token-weight statistics by outcome, one chart per statistic (correct and wrong side by side).
  for (const stat of WEIGHT_STATS) {
    const metrics = WEIGHT_OUTCOMES.map((o) => weightMetric(o, stat)).filter((m) => has.has(m) && !placed.has(m));
    if (metrics.length === 0) continue;
    for (const m of metrics) placed.add(m);
    charts.push({
      id: `weights-${stat}`,
      section: 'weights',
      title: `Token weight ${stat} by outcome`,
      yTitle: `token weight ${stat}`,
      metrics,
    });
  }
  let other = 0;
  for (const n of names) {
    if (placed.has(n)) continue;
    const section: SectionId = inMetricFamily(n, 'weights') || inMetricFamily(n, 'adv') ? 'weights' : 'other';
    charts.push({ id: `metric-${other++}`, section, title: n, yTitle: shortName(n), metrics: [n] });
  }
  const order: SectionId[] = ['reward', 'optimisation', 'rollouts', 'weights', 'other'];
  return charts.sort((a, b) => order.indexOf(a.section) - order.indexOf(b.section));
}

/** Legend order of the held-out chart: sampled accuracy, greedy, pass@n (by n), then the rest. */
function heldOutRank(name: string): number {
  if (name === METRIC.accuracy) return 0;
  if (name === METRIC.accuracyGreedy) return 1;
  const n = passAtMetricN(name);
  return n === undefined ? 1e9 : 1 + n;
}

/** The outcome a token-weight metric is about (`weights/correct/mean` -> correct), for its colour. */
export function outcomeOf(name: string): WeightOutcome | undefined {
  for (const o of WEIGHT_OUTCOMES) for (const s of WEIGHT_STATS) if (name === weightMetric(o, s)) return o;
  return undefined;
}

/** The last path segment, for an axis title (`adv/advantage_abs_mean` -> `advantage_abs_mean`). */
function shortName(name: string): string {
  const s = name.slice(name.lastIndexOf('/') + 1);
  return s === '' ? name : s;
}
