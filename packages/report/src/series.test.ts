import { describe, expect, test } from 'vitest';
import type { MetricsRecord } from './run-dir.js';
import { curve, downsample, flatCurves, mergeSteps, metricNames, movingAverage, seriesPoints, smoothingWindow } from './series.js';

describe('series', () => {
  test('metricNames in first-seen order, without step', () => {
    expect(
      metricNames([
        { step: 0, b: 1 },
        { step: 1, a: 2, b: null },
      ]),
    ).toEqual(['b', 'a']);
  });

  test('seriesPoints skips absent and null values', () => {
    const records: MetricsRecord[] = [
      { step: 0, a: 1 },
      { step: 1, a: null, b: 2 },
      { step: 2, a: 3 },
    ];
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

describe('flatCurves', () => {
  const records: MetricsRecord[] = [
    { step: 1, kl: 0, lr: 5e-5, loss: 0.3, clip: null },
    { step: 2, kl: 0, lr: 5e-5, loss: 0.2 },
    { step: 3, kl: 0, lr: 5e-5, loss: 0.2 + 1e-17, clip: 0 },
  ];

  test('each constant curve with its value and how often it was logged; null as soon as one varies', () => {
    expect(flatCurves(records, ['kl', 'lr'])).toEqual([
      { name: 'kl', value: 0, points: 3 },
      { name: 'lr', value: 5e-5, points: 3 },
    ]);
    expect(flatCurves(records, ['kl', 'loss'])).toBeNull();
    // null values are absent, not a second value; a metric never logged counts for nothing
    expect(flatCurves(records, ['clip', 'never'])).toEqual([{ name: 'clip', value: 0, points: 1 }]);
    expect(flatCurves(records, ['never'])).toBeNull();
  });

  test('equality is exact: one ulp is a change', () => {
    expect(
      flatCurves(
        [
          { step: 0, x: 0.1 },
          { step: 1, x: 0.1 + 2 ** -56 },
        ],
        ['x'],
      ),
    ).toBeNull();
    expect(curve(records, 'clip')).toEqual({ steps: [3], values: [0] });
  });
});
