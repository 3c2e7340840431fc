import { FINISH_CODES } from '@rlvr/core';
import { describe, expect, test } from 'vitest';
import { gradeBatch } from './grade-batch.js';
import { mathReward } from './verify.js';

describe('gradeBatch', () => {
  test('each rollout against its group’s problem; a failed sampling gets 0 whatever its text', () => {
    const problems = [
      { question: 'What is 2 + 2?', answer: '4' },
      { question: 'How many cents is $0.5?', answer: '50' },
    ];
    const texts = ['\\boxed{4}', '\\boxed{5}', '\\boxed{50}', '\\boxed{50}', '\\boxed{4}'];
    const batch = {
      rewards: new Float32Array(5).fill(-1),
      finish: new Uint8Array([FINISH_CODES.stop, FINISH_CODES.stop, FINISH_CODES.stop, FINISH_CODES.error, FINISH_CODES.stop]),
      groupIndex: new Int32Array([0, 0, 1, 1, 1]),
    };
    gradeBatch(batch, texts, problems);
    expect(Array.from(batch.rewards)).toEqual([1, 0, 1, 0, 0]);
    // the question goes with the grading, as mathReward with `problem` grades it
    expect(batch.rewards[2]).toBe(mathReward(texts[2]!, '50', { problem: problems[1]!.question }).reward);
  });
});
