import { SPAN_STRIDE } from '@rlvr/core';
import { describe, expect, test } from 'vitest';
import { noSignalReason } from './no-signal.js';

/** A batch of groups of `rewards` (one array per group); `answered[i]` says whether rollout i has a box, `cut[i]` whether it hit the token limit. */
function batch(rewards: number[][], answered?: boolean[], cut?: boolean[]) {
  const flat = rewards.flat();
  const spans = new Int32Array(flat.length * SPAN_STRIDE).fill(-1);
  flat.forEach((_, i) => {
    if (answered?.[i] ?? true) spans.fill(0, i * SPAN_STRIDE, (i + 1) * SPAN_STRIDE);
  });
  return {
    rewards: Float32Array.from(flat),
    groupIndex: Int32Array.from(rewards.flatMap((g, k) => g.map(() => k))),
    spans,
    finish: Uint8Array.from(flat.map((_, i) => (cut?.[i] ? 1 : 0))),
  };
}

describe('noSignalReason', () => {
  test('one group with a spread in any batch is a learning signal', () => {
    expect(
      noSignalReason([
        batch([
          [0, 0],
          [1, 1],
        ]),
        batch([[0, 1]]),
      ]),
    ).toBeNull();
    expect(noSignalReason([])).toBeNull();
  });

  test('says why every group has one reward: no answer, all correct, all wrong, each problem all or nothing', () => {
    const none = noSignalReason([batch([[0, 0]], [false, false], [true, false]), batch([[0, 0]], [false, false])]);
    expect(none).toBe(
      'every group of completions got one reward, so every advantage is 0 and the policy does not change (2 groups, 4 completions): no completion writes a final answer (\\boxed{...}) on this data; 1 of 4 stopped at rollout.maxNewTokens: the policy does not use the answer format the verifier reads (check the prompt template, or warm the model up on it)',
    );
    expect(
      noSignalReason([
        batch([
          [1, 1],
          [1, 1],
        ]),
      ]),
    ).toMatch(/\(2 groups, 4 completions\): every completion is correct: the problems are too easy/);
    expect(
      noSignalReason([
        batch(
          [
            [0, 0],
            [0, 0],
          ],
          [true, false, false, false],
        ),
      ]),
    ).toMatch(/: every completion is wrong \(1 of 4 write a \\boxed\{\} answer\): the problems are too hard/);
    expect(
      noSignalReason([
        batch([
          [1, 1],
          [0, 0],
          [0, 0],
        ]),
      ]),
    ).toMatch(/: each problem is solved by all its completions or by none \(1 of 3 groups all correct\)/);
  });
});
