/**
 * Why a run learns nothing: under a group baseline, a group whose completions all got the same
 * reward has an advantage of 0 on every token. When every group of the first steps is such a group,
 * `noSignalReason` says so, and why (no final answer, all correct, all wrong, each problem always
 * or never solved), for a trainer's one-line warning.
 */
import { FINISH_CODES, hasAnswer } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';

/**
 * Null when some group of `batches` has a reward spread (a learning signal); else one sentence:
 * what the rollouts had in common and what it means. Groups are `groupIndex` within each batch.
 */
export function noSignalReason(batches: readonly Pick<RolloutBatch, 'rewards' | 'groupIndex' | 'spans' | 'finish'>[]): string | null {
  let n = 0;
  let answered = 0;
  let truncated = 0;
  let groups = 0;
  let solvedGroups = 0;
  const rewards = new Set<number>();
  for (const b of batches) {
    const first = new Map<number, number>();
    for (let i = 0; i < b.rewards.length; i++) {
      const g = b.groupIndex[i]!;
      const r = b.rewards[i]!;
      const seen = first.get(g);
      if (seen === undefined) first.set(g, r);
      else if (seen !== r) return null;
      rewards.add(r);
      n++;
      if (hasAnswer(b, i)) answered++;
      if (b.finish[i] === FINISH_CODES.length) truncated++;
    }
    groups += first.size;
    for (const r of first.values()) if (r > 0) solvedGroups++;
  }
  if (n === 0) return null;
  const head = `every group of completions got one reward, so every advantage is 0 and the policy does not change (${groups} groups, ${n} completions)`;
  const cut = truncated > 0 ? `; ${truncated} of ${n} stopped at rollout.maxNewTokens` : '';
  if (answered === 0)
    return `${head}: no completion writes a final answer (\\boxed{...}) on this data${cut}: the policy does not use the answer format the verifier reads (check the prompt template, or warm the model up on it)`;
  if (rewards.size === 1 && solvedGroups === groups)
    return `${head}: every completion is correct: the problems are too easy for this policy`;
  if (rewards.size === 1)
    return `${head}: every completion is wrong (${answered} of ${n} write a \\boxed{} answer${cut}): the problems are too hard for this policy, or the gold answers are not in a form the verifier can match`;
  return `${head}: each problem is solved by all its completions or by none (${solvedGroups} of ${groups} groups all correct): raise rollout.groupSize or pick problems of middling difficulty`;
}
