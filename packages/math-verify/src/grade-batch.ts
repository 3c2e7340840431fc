import { FINISH_CODES } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';
import { mathReward } from './verify.js';

/**
 * Fill `batch.rewards` in place: rollout i's `mathReward` of `texts[i]` against the answer of problem `groupIndex[i]`,
 * graded with that problem's question (the unit, rounding and options it asks); 0 for a rollout whose sampling failed.
 */
export function gradeBatch(
  batch: Pick<RolloutBatch, 'rewards' | 'finish' | 'groupIndex'>,
  texts: readonly string[],
  problems: readonly { question: string; answer: string }[],
): void {
  const verify = problems.map((p) => ({ problem: p.question })); // one options object per problem
  texts.forEach((text, i) => {
    const p = batch.groupIndex[i]!;
    batch.rewards[i] = batch.finish[i] === FINISH_CODES.error ? 0 : mathReward(text, problems[p]!.answer, verify[p]).reward;
  });
}
