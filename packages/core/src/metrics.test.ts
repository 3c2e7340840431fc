import { describe, expect, it } from 'vitest';
import {
  ESTIMATOR_METRIC,
  METRIC,
  METRIC_FAMILY,
  WEIGHT_OUTCOMES,
  WEIGHT_STATS,
  estimatorMetricName,
  estimatorMetrics,
  estimatorWeightKey,
  inMetricFamily,
  passAtMetric,
  passAtMetricN,
  weightMetric,
} from './index.js';

describe('metric names', () => {
  it('are distinct, and every prefixed name belongs to a declared family', () => {
    const names = Object.values(METRIC);
    expect(new Set(names).size).toBe(names.length);
    const prefixes = Object.values(METRIC_FAMILY) as string[];
    for (const name of names) {
      const slash = name.indexOf('/');
      if (slash >= 0) expect(prefixes, name).toContain(name.slice(0, slash + 1));
    }
  });

  it('map the estimator weight statistics to weights/OUTCOME/STAT and every other key to adv/KEY', () => {
    expect(estimatorMetricName('weight_mean_correct')).toBe('weights/correct/mean');
    expect(estimatorMetricName('weight_std_wrong')).toBe('weights/wrong/std');
    expect(estimatorMetricName('weight_max')).toBe('weights/all/max');
    expect(estimatorMetricName(ESTIMATOR_METRIC.fallbackRate)).toBe('adv/fallback_rate');
    expect(estimatorMetricName('my_plugin_stat')).toBe('adv/my_plugin_stat');
    // near misses are not weight statistics
    expect(estimatorMetricName('weight_median_correct')).toBe('adv/weight_median_correct');
    expect(estimatorMetricName('weight_mean_all')).toBe('adv/weight_mean_all');
    const seen = new Set<string>();
    for (const o of WEIGHT_OUTCOMES) {
      for (const s of WEIGHT_STATS) {
        const name = estimatorMetricName(estimatorWeightKey(o, s));
        expect(name).toBe(weightMetric(o, s));
        expect(inMetricFamily(name, 'weights')).toBe(true);
        seen.add(name);
      }
    }
    expect(seen.size).toBe(12);
  });

  it('tell a family member from a name that only starts alike', () => {
    expect(inMetricFamily(METRIC.lossPolicy, 'loss')).toBe(true);
    expect(inMetricFamily('loss', 'loss')).toBe(true);
    expect(inMetricFamily('lossy', 'loss')).toBe(false);
    expect(inMetricFamily(METRIC.accuracy, 'accuracy')).toBe(true);
    expect(inMetricFamily(METRIC.accuracyGreedy, 'accuracy')).toBe(true);
    expect(inMetricFamily('accuracy_other', 'accuracy')).toBe(false);
    expect(inMetricFamily(METRIC.klApprox, 'clip')).toBe(false);
  });

  it('write and read pass@N', () => {
    expect(passAtMetric(8)).toBe('pass@8');
    expect(passAtMetricN(passAtMetric(1024))).toBe(1024);
    for (const bad of ['pass@0', 'pass@', 'pass@08', 'pass@8x', 'xpass@8', 'accuracy']) expect(passAtMetricN(bad), bad).toBeUndefined();
    expect(() => passAtMetric(0)).toThrow(/positive integer, got 0/);
    expect(() => passAtMetric(2.5)).toThrow(RangeError);
  });
});

describe('estimatorMetrics', () => {
  it('weight statistics take the report names; the rest goes under adv/', () => {
    expect(estimatorMetrics({ weight_mean: 1.2, weight_max_correct: 5, weight_std_wrong: 0.3, fallback_rate: 0.1 })).toEqual({
      'weights/all/mean': 1.2,
      'weights/correct/max': 5,
      'weights/wrong/std': 0.3,
      'adv/fallback_rate': 0.1,
    });
  });
});
