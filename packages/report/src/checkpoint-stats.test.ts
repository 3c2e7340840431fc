import { describe, expect, test } from 'vitest';
import { reasoningProfiles } from './checkpoint-stats.js';
import type { CheckpointWeightRecord } from './run-dir.js';

/** A rollout whose R reasoning tokens weigh `reasoning`, then a box (content 5) and post-answer tokens (9: never pooled). */
function rollout(step: number, id: number, reasoning: number[]): CheckpointWeightRecord {
  const R = reasoning.length;
  return {
    step,
    rollout: id,
    correct: true,
    tokens: [...reasoning.map(() => 'x'), '\\boxed{', '7', '}', '.', 'EOS'],
    weights: [...reasoning, 1, 5, 1, 9, 9],
    spans: { open: [R, R + 1], content: [R + 1, R + 2], close: [R + 2, R + 3] },
    reasoning: R,
  };
}

describe('reasoningProfiles: the GRAIL reference U-shape over checkpoints', () => {
  test('pools only the reasoning tokens, at t/(R-1), token-weighted over rollouts', () => {
    // R = 5: positions 0, .25, .5, .75, 1 -> with 2 bins: [0, .5) holds t = 0, 1; [.5, 1] holds t = 2, 3, 4
    // R = 3: positions 0, .5, 1 -> bin 0 holds t = 0; bin 1 holds t = 1, 2
    const records = [rollout(10, 0, [2, 4, 6, 8, 10]), rollout(10, 1, [1, 3, 5])];
    const [p] = reasoningProfiles(records, 2);
    expect(p!.step).toBe(10);
    expect(p!.rollouts).toBe(2);
    expect(p!.bins.map((b) => b.tokens)).toEqual([3, 5]);
    expect(p!.bins[0]!.mean).toBeCloseTo((2 + 4 + 1) / 3, 12);
    expect(p!.bins[1]!.mean).toBeCloseTo((6 + 8 + 10 + 3 + 5) / 5, 12);
    // the answer content (5) and the post-answer tokens (9) never enter: every mean is below 9 and none is pulled to 5
    expect(reasoningProfiles([rollout(0, 0, [1, 1, 1])], 4)[0]!.bins.map((b) => b.mean)).toEqual([1, null, 1, 1]);
  });

  test('one profile per checkpoint step, in order; rollouts without a box or with R < 2 are left out and counted', () => {
    const none: CheckpointWeightRecord = {
      step: 5,
      rollout: 2,
      correct: false,
      tokens: ['a', 'b'],
      weights: [3, 3],
      spans: null,
      reasoning: null,
    };
    const short = rollout(5, 3, [7]);
    const profiles = reasoningProfiles([rollout(20, 0, [1, 2]), none, short, rollout(5, 0, [4, 4])], 2);
    expect(profiles.map((p) => [p.step, p.rollouts, p.skipped])).toEqual([
      [5, 1, 2],
      [20, 1, 0],
    ]);
    expect(profiles[0]!.bins.map((b) => b.mean)).toEqual([4, 4]);
    expect(profiles[1]!.bins.map((b) => b.mean)).toEqual([1, 2]);
  });
});
