import { describe, expect, test } from 'vitest';
import type { MetricsRecord } from './run-dir.js';
import { downsample, mergeSteps, metricNames, movingAverage, smoothingWindow, planMetricCharts, seriesPoints } from './metric-plan.js';

describe('planMetricCharts', () => {
  test('known families share charts in section order; unknown metrics get their own', () => {
    const names = ['lr', 'zzz', 'clip/high_frac', 'reward/mean', 'weights/correct/mean', 'accuracy', 'loss/policy', 'reward/std', 'clip/low_frac', 'weights/wrong/mean', 'weights/fallback_rate', 'kl/approx', 'loss/kl'];
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
});

describe('series', () => {
  test('metricNames in first-seen order, without step', () => {
    expect(metricNames([{ step: 0, b: 1 }, { step: 1, a: 2, b: null }])).toEqual(['b', 'a']);
  });

  test('seriesPoints skips absent and null values', () => {
    const records: MetricsRecord[] = [{ step: 0, a: 1 }, { step: 1, a: null, b: 2 }, { step: 2, a: 3 }];
    expect(seriesPoints(records, ['a', 'b'], 100)).toEqual([
      { step: 0, series: 'a', value: 1 },
      { step: 2, series: 'a', value: 3 },
      { step: 1, series: 'b', value: 2 },
    ]);
  });

  test('downsample averages consecutive buckets and keeps short series unchanged', () => {
    expect(downsample([0, 1, 2], [5, 6, 7], 3)).toEqual([
      [0, 5],
      [1, 6],
      [2, 7],
    ]);
    // 10 points into 4 buckets: [0,1], [2,3,4], [5,6], [7,8,9]
    expect(downsample([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [0, 10, 20, 30, 40, 50, 60, 70, 80, 90], 4)).toEqual([
      [0.5, 5],
      [3, 30],
      [5.5, 55],
      [8, 80],
    ]);
  });
});

describe('mergeSteps', () => {
  test('lines sharing a step merge, later values win, steps come out sorted', () => {
    const lines: MetricsRecord[] = [
      { step: 0, loss: 1 },
      { step: 1, loss: 2 },
      { step: 2, loss: 3 },
      { step: 1, loss: 20, accuracy: 0.5 }, // a resumed run re-ran step 1 and logged an eval
      { step: 2, accuracy: 0.6 },
      { step: 2, accuracy: 0.7 },
    ];
    expect(mergeSteps(lines)).toEqual({
      records: [
        { step: 0, loss: 1 },
        { step: 1, loss: 20, accuracy: 0.5 },
        { step: 2, loss: 3, accuracy: 0.7 },
      ],
      repeated: 2,
    });
    expect(lines[1]).toEqual({ step: 1, loss: 2 });
  });
});

describe('moving average', () => {
  test('centred, shrinking symmetrically at the ends', () => {
    // window 3: ends use a window of 1, inside the mean of three neighbours
    expect(movingAverage([1, 2, 6, 4, 10], 3)).toEqual([1, 3, 4, 20 / 3, 10]);
    // window 5: index 1 can only use 3 points, index 2 all 5
    const got = movingAverage([1, 2, 6, 4, 10, 0], 5);
    expect(got[1]).toBeCloseTo(3, 12);
    expect(got[2]).toBeCloseTo(23 / 5, 12);
    expect(got[3]).toBeCloseTo(22 / 5, 12);
    expect(got[4]).toBeCloseTo(14 / 3, 12);
  });

  test('window: none below 20 points, odd, about n/15', () => {
    expect(smoothingWindow(19)).toBe(0);
    expect(smoothingWindow(20)).toBe(3);
    expect(smoothingWindow(60)).toBe(5);
    expect(smoothingWindow(1000)).toBe(67);
  });
});
