import { getSpans } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';
import type { SampleRecord } from './run-dir.js';

/** What a sample record reads of a step's advantages: `[B]` sequence advantages and `[T]` token weights. */
export interface SampleAdvantages {
  sequenceAdvantages: ArrayLike<number>;
  weights: Float32Array;
}

/**
 * `count` rollouts of a step as `samples.jsonl` records, spread over the groups of `groupSize`
 * (the first of every k-th group, alternating with the last, so both outcomes tend to show).
 * `questions[g]` is group g's question; `decode` gives a token's text.
 */
export function sampleRecords(
  step: number,
  batch: RolloutBatch,
  adv: SampleAdvantages,
  questions: readonly string[],
  decode: (id: number) => string,
  groupSize: number,
  count: number,
): SampleRecord[] {
  const B = batch.numRollouts;
  const G = groupSize;
  const picks = new Set<number>();
  for (let k = 0; k < Math.min(count, B); k++) {
    const g = Math.floor((k * B) / Math.min(count, B) / G);
    picks.add(Math.min(B - 1, g * G + (k % 2 === 0 ? 0 : G - 1)));
  }
  return [...picks]
    .sort((a, b) => a - b)
    .map((i) => {
      const [c0, c1] = [batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!];
      return {
        step,
        group: batch.groupIndex[i]!,
        reward: batch.rewards[i]!,
        correct: batch.rewards[i]! > 0,
        advantage: adv.sequenceAdvantages[i]!,
        prompt: questions[batch.groupIndex[i]!]!,
        tokens: Array.from(batch.completionTokens.subarray(c0, c1), decode),
        weights: Array.from(adv.weights.subarray(c0, c1)),
        spans: getSpans(batch, i),
      };
    });
}
