import { describe, expect, test } from 'vitest';
import { duration, progressLine } from './progress.js';
import { estimatorMetrics } from './step.js';

describe('estimatorMetrics', () => {
  test('weight statistics take the report names; the rest goes under adv/', () => {
    expect(estimatorMetrics({ weight_mean: 1.2, weight_max_correct: 5, weight_std_wrong: 0.3, fallback_rate: 0.1 })).toEqual({
      'weights/all/mean': 1.2,
      'weights/correct/max': 5,
      'weights/wrong/std': 0.3,
      'adv/fallback_rate': 0.1,
    });
  });
});

describe('progressLine', () => {
  test('bar, steps, reward, accuracy, rate and time left', () => {
    expect(progressLine({ step: 30, steps: 120, reward: 0.4125, accuracy: 0.6171875, secondsPerStep: 2 }, 12)).toBe(
      '[###.........]  30/120  reward 0.41  acc 61.7%  2.0 s/step  eta 3m00s',
    );
    expect(progressLine({ step: 0, steps: 5, reward: Number.NaN, accuracy: Number.NaN, secondsPerStep: Number.NaN }, 4)).toBe(
      '[....] 0/5  reward   -   acc -  - s/step  eta -',
    );
    expect([duration(59.4), duration(95), duration(3700)]).toEqual(['59s', '1m35s', '1h01m']);
  });
});
