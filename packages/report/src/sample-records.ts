import { getSpans } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';
import type { SampleRecord } from './run-dir.js';

/** What a sample record reads of a step's advantages: `[B]` sequence advantages and `[T]` token weights. */
export interface SampleAdvantages {
  sequenceAdvantages: ArrayLike<number>;
  weights: Float32Array;
}

/**
 * Which `count` rollouts of a batch to log: correct and wrong side by side. Groups whose rollouts disagree (the only
 * ones with a nonzero advantage under a group baseline) come first, spread over the batch, each giving its first
 * correct and its first wrong rollout; where there are too few, the first and the last rollout of groups spread over
 * the rest fill up. Sorted by rollout index, so a group's correct and wrong rollouts sit together.
 */
function pickRollouts(batch: RolloutBatch, groupSize: number, count: number): number[] {
  const B = batch.numRollouts;
  const n = Math.min(count, B);
  const members = new Map<number, number[]>();
  for (let i = 0; i < B; i++) members.set(batch.groupIndex[i]!, [...(members.get(batch.groupIndex[i]!) ?? []), i]);
  const correct = (i: number) => batch.rewards[i]! > 0;
  const mixed = [...members.values()].filter((m) => m.some(correct) && !m.every(correct));
  const picks = new Set<number>();
  const pairs = Math.min(mixed.length, Math.floor(n / 2));
  for (let k = 0; k < pairs; k++) {
    const m = mixed[Math.floor((k * mixed.length) / pairs)]!;
    picks.add(m.find(correct)!);
    picks.add(m.find((i) => !correct(i))!);
  }
  // too few disagreeing groups: the first and the last rollout of groups spread over the batch, then any
  const G = groupSize;
  for (let k = 0; k < n && picks.size < n; k++) {
    const g = Math.floor((k * B) / n / G);
    picks.add(Math.min(B - 1, g * G + (k % 2 === 0 ? 0 : G - 1)));
  }
  for (let i = 0; picks.size < n && i < B; i++) picks.add(i);
  return [...picks].sort((a, b) => a - b);
}

/**
 * `count` rollouts of a step as `samples.jsonl` records, correct and wrong ones beside each other
 * (`pickRollouts`). `questions[g]` is group g's question; `decode` gives a token's text. `routed`: the groups a
 * method's rollout stage re-sampled on another question (SCOPE-RL's scaffold) and that question: their records
 * show it as `prompt`, the question their tokens answer, with `routed: true`.
 */
export function sampleRecords(
  step: number,
  batch: RolloutBatch,
  adv: SampleAdvantages,
  questions: readonly string[],
  decode: (id: number) => string,
  groupSize: number,
  count: number,
  routed: { routed: readonly number[]; routedQuestions: readonly string[] } = { routed: [], routedQuestions: [] },
): SampleRecord[] {
  const routedTo = new Map(routed.routed.map((g, k) => [g, routed.routedQuestions[k]!]));
  return pickRollouts(batch, groupSize, count).map((i) => {
    const [c0, c1] = [batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!];
    const g = batch.groupIndex[i]!;
    return {
      step,
      group: batch.groupIndex[i]!,
      reward: batch.rewards[i]!,
      correct: batch.rewards[i]! > 0,
      advantage: adv.sequenceAdvantages[i]!,
      prompt: routedTo.get(g) ?? questions[g]!,
      routed: routedTo.has(g),
      tokens: Array.from(batch.completionTokens.subarray(c0, c1), decode),
      weights: Array.from(adv.weights.subarray(c0, c1)),
      spans: getSpans(batch, i),
    };
  });
}
