/**
 * The public entry points: `verifyAnswer` compares two already-extracted answers; `mathReward` extracts the answer
 * from a completion first. Both validate their options and refuse non-string input (the only ways they throw) and
 * never throw on any string.
 */
import { MathVerifyError, assertText } from './errors.js';
import { type RewardResult, type VerifyResult, gradeAnswer, gradeCompletion } from './grade.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';

export type { RewardResult, VerifyResult } from './grade.js';

/**
 * Compares two already-extracted answers (LaTeX or plain). Two unparseable answers are never equal unless their
 * normalised text is identical.
 */
export function verifyAnswer(gold: string, pred: string, options?: VerifyOptionsInput): VerifyResult {
  assertText(gold, 'gold');
  assertText(pred, 'pred');
  return gradeAnswer(gold, pred, resolveOptions(options));
}

/**
 * Reward 1 when the completion's final answer equals `gold`, else 0, with the answer it read and where its box is.
 * Never throws on string input.
 */
export function mathReward(completion: string, gold: string, options?: VerifyOptionsInput): RewardResult {
  assertText(completion, 'completion');
  assertText(gold, 'gold');
  return gradeCompletion(completion, gold, resolveOptions(options));
}

/** `mathReward` over parallel arrays of completions and golds. */
export function mathRewardBatch(completions: readonly string[], golds: readonly string[], options?: VerifyOptionsInput): RewardResult[] {
  checkBatch('mathRewardBatch', completions, golds);
  const opts = resolveOptions(options);
  return completions.map((c, i) => gradeCompletion(c, golds[i] as string, opts));
}

/** Two arrays of strings of one length, or a `MathVerifyError` naming the first bad item (`names`: what one item of each array is). */
export function checkBatch(
  what: string,
  completions: readonly unknown[],
  golds: readonly unknown[],
  names: readonly [string, string] = ['completion', 'gold'],
): void {
  const [first, second] = names;
  if (!Array.isArray(completions))
    throw new MathVerifyError('invalid_input', `${what}: ${first}s must be an array of strings`, { field: `${first}s` });
  if (!Array.isArray(golds))
    throw new MathVerifyError('invalid_input', `${what}: ${second}s must be an array of strings`, { field: `${second}s` });
  if (completions.length !== golds.length) {
    throw new MathVerifyError('invalid_row', `${what}: ${completions.length} ${first}s but ${golds.length} ${second}s`);
  }
  for (let i = 0; i < completions.length; i++) {
    assertText(completions[i], first, i);
    assertText(golds[i], second, i);
  }
}
