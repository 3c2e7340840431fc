import { describe, expect, it } from 'vitest';
import { batchFromRows } from './rows.js';
import { validateBatch } from './validate.js';
import type { RolloutBatch } from './batch.js';

function base(): RolloutBatch {
  return batchFromRows([
    {
      group: 0,
      prompt: [1],
      completion: [5, 6, 7],
      reward: 1,
      spans: { open: [0, 1], content: [1, 2], close: [2, 3] },
      behaviorLogprobs: [-1, -1, -1],
    },
    { group: 1, prompt: [1], completion: [9, 9], reward: 0, behaviorLogprobs: [-1, -1] },
  ]);
}

describe('validateBatch', () => {
  it('accepts a consistent batch', () => {
    expect(validateBatch(base()).numRollouts).toBe(2);
  });

  it.each([
    ['wrong array length', (b: RolloutBatch) => (b.rewards = new Float32Array(3)), /field rewards: expected length 2, found 3/],
    ['wrong array type', (b: RolloutBatch) => ((b as { groupIndex: unknown }).groupIndex = [0, 1]), /groupIndex/],
    ['offsets not starting at 0', (b: RolloutBatch) => (b.completionOffsets[0] = 1), /field completionOffsets: must start at 0/],
    ['decreasing offsets', (b: RolloutBatch) => b.completionOffsets.set([0, 4, 3]), /rollout 1, field completionOffsets: offsets decrease/],
    ['last offset mismatch', (b: RolloutBatch) => (b.promptOffsets[2] = 1), /promptOffsets: offsets decrease|last offset/],
    ['negative group', (b: RolloutBatch) => (b.groupIndex[1] = -1), /rollout 1, field groupIndex: group id must be >= 0/],
    ['NaN reward', (b: RolloutBatch) => (b.rewards[0] = Number.NaN), /rollout 0, field rewards: reward must be finite/],
    [
      'unknown finish code',
      (b: RolloutBatch) => (b.finish[1] = 7),
      /rollout 1, field finish: unknown finish code 7 \(allowed 0..2: stop, length, error\)/,
    ],
    [
      'span beyond the completion',
      (b: RolloutBatch) => (b.spans[5] = 4),
      /rollout 0, field spans: close span ends at 4 but the completion has 3 tokens/,
    ],
    ['span out of order', (b: RolloutBatch) => (b.spans[2] = 0), /rollout 0, field spans: spans must be ordered/],
    ['partial no-answer span', (b: RolloutBatch) => (b.spans[7] = 0), /rollout 1, field spans: a rollout without an answer/],
    [
      'positive log-prob',
      (b: RolloutBatch) => (b.behaviorLogprobs![4] = 0.5),
      /rollout 1, field behaviorLogprobs: log-prob of token 1 must be <= 0/,
    ],
    [
      'log-probs of wrong length',
      (b: RolloutBatch) => (b.behaviorLogprobs = new Float32Array(2)),
      /field behaviorLogprobs: expected length 5 \(totalTokens\)/,
    ],
  ])('rejects %s naming where', (_name, mutate, message) => {
    const b = base();
    mutate(b);
    expect(() => validateBatch(b)).toThrow(message);
  });
});
