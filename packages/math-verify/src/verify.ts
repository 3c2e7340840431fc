/**
 * The public entry points: `verifyAnswer` compares two already-extracted answers; `mathReward` extracts the answer
 * from a completion first. Both validate their options and refuse non-string input (the only ways they throw) and
 * never throw on any string.
 */
import { MathVerifyError, assertText } from './errors.js';
import { type RewardResult, type VerifyResult, gradeAnswer, gradeCompletion } from './grade.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';

export type { RewardResult, VerifyResult } from './grade.js';

/** `verifyAnswer`'s named form: which string is the gold cannot be mixed up. `problem` is the item's statement. */
export interface AnswerPair {
  gold: string;
  pred: string;
  problem?: string | null;
}

/** `mathReward`'s named form: which string is the gold cannot be mixed up. `problem` is the item's statement. */
export interface CompletionItem {
  completion: string;
  gold: string;
  problem?: string | null;
}

/**
 * Compares two already-extracted answers (LaTeX or plain). Two unparseable answers are never equal unless their
 * normalised text is identical. Positional: gold first, as Math-Verify's `verify(gold, answer)`; or named:
 * `verifyAnswer({ gold, pred }, options)`.
 */
// The positional overload is the last one, which `Parameters<typeof verifyAnswer>` reads, as before the named form.
export function verifyAnswer(pair: AnswerPair, options?: VerifyOptionsInput): VerifyResult;
export function verifyAnswer(gold: string, pred: string, options?: VerifyOptionsInput): VerifyResult;
export function verifyAnswer(a: string | AnswerPair, b?: string | VerifyOptionsInput, c?: VerifyOptionsInput): VerifyResult {
  const [gold, pred, options] = named(a, b, c, 'verifyAnswer', ['gold', 'pred']);
  assertText(gold, 'gold');
  assertText(pred, 'pred');
  return gradeAnswer(gold, pred, resolveOptions(options));
}

/**
 * Reward 1 when the completion's final answer equals `gold`, else 0, with the answer it read and where its box is.
 * Never throws on string input. Positional: the completion first, as reward functions take it (TRL, verl's
 * `compute_score(solution_str, ground_truth)`); or named: `mathReward({ completion, gold }, options)`.
 */
export function mathReward(item: CompletionItem, options?: VerifyOptionsInput): RewardResult;
export function mathReward(completion: string, gold: string, options?: VerifyOptionsInput): RewardResult;
export function mathReward(a: string | CompletionItem, b?: string | VerifyOptionsInput, c?: VerifyOptionsInput): RewardResult {
  const [completion, gold, options] = named(a, b, c, 'mathReward', ['completion', 'gold']);
  assertText(completion, 'completion');
  assertText(gold, 'gold');
  return gradeCompletion(completion, gold, resolveOptions(options));
}

/**
 * The two strings and the options of a positional or a named call. A named call takes its options second and its
 * item's `problem` into them; a field missing from the object, or a problem given twice, is a `MathVerifyError`.
 */
function named(
  a: unknown,
  b: unknown,
  c: VerifyOptionsInput | undefined,
  fn: string,
  [first, second]: readonly [string, string],
): [unknown, unknown, VerifyOptionsInput | undefined] {
  if (typeof a !== 'object' || a === null || Array.isArray(a)) return [a, b, c];
  if (c !== undefined || (b !== undefined && (typeof b !== 'object' || b === null)))
    throw new MathVerifyError(
      'invalid_input',
      `${fn}({ ${first}, ${second} }, options): the named form takes options second, nothing third`,
    );
  const item = a as Record<string, unknown>;
  const unknown = Object.keys(item).filter((k) => k !== first && k !== second && k !== 'problem');
  if (unknown.length > 0)
    throw new MathVerifyError(
      'invalid_input',
      `${fn}: unknown field ${JSON.stringify(unknown[0])} (the named form takes ${first}, ${second} and problem)`,
      {
        field: unknown[0] as string,
      },
    );
  let options = b as VerifyOptionsInput | undefined;
  const problem = item.problem;
  if (problem !== undefined) {
    if (problem !== null && typeof problem !== 'string') assertText(problem, 'problem');
    if (options?.problem !== undefined && options.problem !== problem)
      throw new MathVerifyError('invalid_input', `${fn}: problem given both in the item and in options`, { field: 'problem' });
    options = { ...options, problem: problem as string | null };
  }
  return [item[first], item[second], options];
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
