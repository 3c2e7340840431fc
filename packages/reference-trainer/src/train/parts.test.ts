import { describe, expect, test } from 'vitest';
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
