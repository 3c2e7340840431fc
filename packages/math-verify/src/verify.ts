/**
 * The public entry points: `verifyAnswer` compares two already-extracted answers; `mathReward` extracts the answer
 * from a completion first. Both validate their options (the only way they throw) and never throw on any string.
 */
import { MathVerifyError } from './errors.js';
import { type RewardResult, type VerifyResult, gradeAnswer, gradeCompletion } from './grade.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';

export type { RewardResult, VerifyResult } from './grade.js';

/**
 * Compares two already-extracted answers (LaTeX or plain). Two unparseable answers are never equal unless their
 * normalised text is identical.
 */
export function verifyAnswer(gold: string, pred: string, options?: VerifyOptionsInput): VerifyResult {
  return gradeAnswer(gold, pred, resolveOptions(options));
}

/**
 * Reward 1 when the completion's final answer equals `gold`, else 0. Never throws on string input; oversized inputs
 * are refused with a reason.
 */
export function mathReward(completion: string, gold: string, options?: VerifyOptionsInput): RewardResult {
  return gradeCompletion(completion, gold, resolveOptions(options));
}

/** `mathReward` over parallel arrays of completions and golds. */
export function mathRewardBatch(completions: readonly string[], golds: readonly string[], options?: VerifyOptionsInput): RewardResult[] {
  if (completions.length !== golds.length) {
    throw new MathVerifyError('invalid_row', `mathRewardBatch: ${completions.length} completions but ${golds.length} golds`);
  }
  const opts = resolveOptions(options);
  return completions.map((c, i) => gradeCompletion(c, golds[i] as string, opts));
}
