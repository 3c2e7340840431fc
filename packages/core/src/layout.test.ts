import { describe, expect, it } from 'vitest';
import { batchFromRows } from './rows.js';
import { planMicroBatches, packRollouts, gatherPacked, scatterPacked } from './layout.js';

const batch = batchFromRows([
  { group: 0, prompt: [1, 2, 3], completion: [10, 11], reward: 1 },
  { group: 0, prompt: [1, 2, 3], completion: [12, 13, 14, 15], reward: 0, finish: 'length' },
  { group: 1, prompt: [4], completion: [16], reward: 1 },
  { group: 1, prompt: [4], completion: [17, 18, 19], reward: 1 },
  { group: 2, prompt: [5, 6], completion: [20], reward: 0, finish: 'error' },
]);

describe('packRollouts', () => {
  it('left-pads prompts and right-pads completions so completions start at column P', () => {
    const m = packRollouts(batch, [0, 2], 0);
    expect([m.P, m.C, m.S, m.n]).toEqual([3, 2, 5, 2]);
    expect(Array.from(m.ids)).toEqual([1, 2, 3, 10, 11, 0, 0, 4, 16, 0]);
    expect(Array.from(m.attentionMask)).toEqual([1, 1, 1, 1, 1, 0, 0, 1, 1, 0]);
    expect(Array.from(m.completionMask)).toEqual([1, 1, 1, 0]);
    const perToken = Float32Array.from({ length: 11 }, (_, t) => t + 0.5);
    const packed = gatherPacked(batch, m, perToken);
    expect(Array.from(packed)).toEqual([0.5, 1.5, 6.5, 0]);
    const back = new Float32Array(11);
    scatterPacked(batch, m, packed, back);
    expect(Array.from(back)).toEqual([0.5, 1.5, 0, 0, 0, 0, 6.5, 0, 0, 0, 0]);
  });
});

describe('planMicroBatches', () => {
  it('keeps padded size within the budget, covers each included rollout once, deterministically', () => {
    const plan = planMicroBatches(batch, 10);
    expect(plan.flat().sort()).toEqual([0, 1, 2, 3, 4]);
    for (const mb of plan) {
      const m = packRollouts(batch, mb, 0);
      expect(mb.length === 1 || m.n * m.S <= 10).toBe(true);
    }
    expect(planMicroBatches(batch, 10)).toEqual(plan);
    expect(planMicroBatches(batch, 1000, [true, false, true, false, false])).toEqual([[2, 0]]);
    expect(() => planMicroBatches(batch, 0)).toThrow(/tokenBudget must be positive/);
  });
});
