import { describe, expect, it } from 'vitest';
import { batchFromRows } from '@rlvr/core';
import { selectRollouts, batchMetrics } from './batch-filters.js';

const batch = batchFromRows([
  { group: 0, prompt: [1, 2, 3], completion: [10, 11], reward: 1 },
  { group: 0, prompt: [1, 2, 3], completion: [12, 13, 14, 15], reward: 0, finish: 'length' },
  { group: 1, prompt: [4], completion: [16], reward: 1 },
  { group: 1, prompt: [4], completion: [17, 18, 19], reward: 1 },
  { group: 2, prompt: [5, 6], completion: [20], reward: 0, finish: 'error' },
]);

describe('selectRollouts and batchMetrics', () => {
  it('drops errored, optionally truncated and zero-spread groups, and counts each', () => {
    const s = selectRollouts(batch, { maskTruncated: true, filterZeroStd: true });
    // group 1 has rewards [1, 1]: zero spread; group 2 is one errored rollout (zero spread too)
    expect(s.include).toEqual([true, false, false, false, false]);
    expect([s.maskedTruncated, s.filteredZeroStd, s.zeroStdGroups, s.errored]).toEqual([1, 2, 2, 1]);
    const loose = selectRollouts(batch, { maskTruncated: false, filterZeroStd: false });
    expect(loose.include).toEqual([true, true, true, true, false]);
  });

  it('reports reward and length statistics', () => {
    const m = batchMetrics(batch, 2);
    expect(m['reward/mean']).toBeCloseTo(0.6, 6);
    expect(m['reward/std']).toBeCloseTo(Math.sqrt(0.3), 6); // sample std of [1,0,1,1,0]
    expect(m.frac_reward_zero_std).toBeCloseTo(2 / 3, 6);
    expect(m['completions/mean_length']).toBeCloseTo(11 / 5, 6);
    expect([m['completions/min_length'], m['completions/max_length'], m['completions/clipped_ratio']]).toEqual([1, 4, 0.2]);
  });
});
