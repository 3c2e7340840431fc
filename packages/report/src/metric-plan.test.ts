import { describe, expect, test } from 'vitest';
import { METRIC, estimatorMetricName, passAtMetric } from '@rlvr/core';
import { outcomeOf, planMetricCharts } from './metric-plan.js';

describe('planMetricCharts', () => {
  test('known families share charts in section order; unknown metrics get their own', () => {
    const names = [
      'lr',
      'zzz',
      'clip/high_frac',
      'reward/mean',
      'weights/correct/mean',
      'accuracy',
      'loss/policy',
      'reward/std',
      'clip/low_frac',
      'weights/wrong/mean',
      'weights/fallback_rate',
      'kl/approx',
      'loss/kl',
    ];
    const plan = planMetricCharts(names);
    expect(plan.map((c) => [c.id, c.section, c.metrics])).toEqual([
      ['reward', 'reward', ['reward/mean']],
      ['accuracy', 'reward', ['accuracy']],
      ['loss', 'optimisation', ['loss/policy', 'loss/kl']],
      ['kl', 'optimisation', ['kl/approx']],
      ['clip', 'optimisation', ['clip/high_frac', 'clip/low_frac']],
      ['lr', 'optimisation', ['lr']],
      ['weights-mean', 'weights', ['weights/correct/mean', 'weights/wrong/mean']],
      ['metric-1', 'weights', ['weights/fallback_rate']],
      ['metric-0', 'other', ['zzz']],
    ]);
    expect(plan[0]!.band).toBe('reward/std');
    // every metric is drawn exactly once (reward/std as the band)
    const drawn = plan.flatMap((c) => [...c.metrics, ...(c.band ? [c.band] : [])]).sort();
    expect(drawn).toEqual([...names].sort());
  });

  test('reward/std without reward/mean gets a chart of its own', () => {
    expect(planMetricCharts(['reward/std']).map((c) => c.metrics)).toEqual([['reward/std']]);
  });

  test('what rlvr train logs: held-out metrics in legend order, lengths apart from the cut fraction, timings together, weights by outcome', () => {
    const names = [
      METRIC.rewardMean,
      METRIC.completionsMeanLength,
      METRIC.completionsClippedRatio,
      METRIC.completionsMaxLength,
      passAtMetric(8),
      METRIC.accuracy,
      METRIC.timeStep,
      METRIC.timeSample,
      estimatorMetricName('weight_mean_wrong'),
      estimatorMetricName('weight_mean'),
      estimatorMetricName('weight_mean_correct'),
      estimatorMetricName('weight_max_correct'),
      estimatorMetricName('fallback_rate'),
      METRIC.accuracyGreedy,
    ];
    const plan = planMetricCharts(names);
    const byId = Object.fromEntries(plan.map((c) => [c.id, c]));
    expect(byId.accuracy!.metrics).toEqual(['accuracy', 'accuracy/greedy', 'pass@8']);
    expect(byId.completions!.metrics).toEqual(['completions/mean_length', 'completions/max_length']);
    expect(byId.completions!.yTitle).toBe('tokens');
    expect(byId['completions-clipped']!.metrics).toEqual(['completions/clipped_ratio']);
    expect(byId.time!.metrics).toEqual(['time/step_s', 'time/sample_s']);
    expect(byId['weights-mean']!.metrics).toEqual(['weights/all/mean', 'weights/correct/mean', 'weights/wrong/mean']);
    expect(byId['weights-max']!.metrics).toEqual(['weights/correct/max']);
    expect(plan.find((c) => c.metrics.includes('adv/fallback_rate'))!.section).toBe('weights');
    // every y-axis title is short enough for the 190 px axis (about 6 px a character)
    for (const c of plan) expect(c.yTitle.length, c.id).toBeLessThanOrEqual(28);
  });

  test('outcomeOf: only the token-weight statistics have an outcome', () => {
    expect(outcomeOf('weights/correct/mean')).toBe('correct');
    expect(outcomeOf('weights/wrong/std')).toBe('wrong');
    expect(outcomeOf('weights/all/min')).toBe('all');
    expect(outcomeOf('weights/correct/median')).toBeUndefined();
    expect(outcomeOf('accuracy')).toBeUndefined();
  });
});
