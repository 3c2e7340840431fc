/** The one options schema of the verifier; every field has a default, types are inferred from it. */
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { MathVerifyError } from './errors.js';

export const VerifyOptionsSchema = z
  .object({
    /** Which `\boxed{}` answer to grade when there are several: the last (default) or the first. */
    extract: z.enum(['last', 'first']).default('last'),
    /**
     * Eval-only fallbacks when a completion has no `\boxed{}`: "the final answer is ...", `Answer: ...`,
     * `<answer>..</answer>`, the last math environment, then the last number. Off for training rewards,
     * because they reward answers the model never committed to.
     */
    fallbacks: z.boolean().default(false),
    /**
     * With `fallbacks`, where the Minerva sentence "The final answer is X. I hope it is correct." ranks against boxes:
     * only without boxes (`after_boxes`, default), whichever comes later (`by_position`, Math-Verify with
     * `boxed_match_priority=0`), or always first (`before_boxes`, Math-Verify's library defaults).
     */
    minervaSentence: z.enum(['after_boxes', 'by_position', 'before_boxes']).default('after_boxes'),
    /** With `fallbacks`, also take the last number of the text as a last resort. */
    lastNumber: z.boolean().default(true),
    /**
     * The completion ends at the first of these chat-template markers; text after it (a hallucinated next turn) is
     * not graded. `[]` turns this off.
     */
    endOfTurnMarkers: z.array(z.string().min(1)).default(['<|im_end|>', '<|im_start|>', '<|endoftext|>', '<|eot_id|>']),
    /** Grade only the text after the last of these delimiters (e.g. `["</think>"]`); none present = no answer. */
    reasoningDelimiters: z.array(z.string().min(1)).default([]),
    /** `math` (default) or `choice`: multiple-choice letters, read from anchors, a leading `(C)`, or the last letter. */
    mode: z.enum(['math', 'choice']).default('math'),
    /** Letters that count as choices in `choice` mode. */
    choices: z.string().regex(/^[A-Z]+$/).default('ABCDEFGHIJ'),
    /** Relative tolerance for inexact values (decimals, irrationals). */
    relTol: z.number().positive().max(0.1).default(1e-6),
    /** `50\%` reads as 0.5 (`fraction`), as 50 (`strip`), or either (`either`, default: graders disagree). */
    percent: z.enum(['either', 'fraction', 'strip']).default('either'),
    /** A bare list `1, 2, 3` compares as a set (`unordered`, default) or in order (`ordered`, hendrycks MATH). */
    listOrder: z.enum(['unordered', 'ordered']).default('unordered'),
    /** A decimal with k digits matches an exact value it agrees with to k digits (`1.414` for `\sqrt2`). */
    roundedDecimals: z.boolean().default(true),
    /** Accept an inequality pred for an interval gold (gold inequality vs pred interval is always accepted). */
    allowSetRelationComp: z.boolean().default(false),
    /** `false` also accepts the same expression in other variable names (`f(x)` for `f(y)`), as Math-Verify's `strict=False`. */
    strict: z.boolean().default(true),
    /** Longer completions are refused with reason `completion_too_large` (characters). */
    maxCompletionChars: z.number().int().positive().default(1_000_000),
    /** Longer extracted answers are refused with reason `answer_too_large` (characters). */
    maxAnswerChars: z.number().int().positive().default(2_000),
  })
  .strict();

export type VerifyOptions = z.infer<typeof VerifyOptionsSchema>;
export type VerifyOptionsInput = z.input<typeof VerifyOptionsSchema>;

const cache = new WeakMap<object, VerifyOptions>();
const DEFAULTS = VerifyOptionsSchema.parse({});

/** Validates options; throws `MathVerifyError('invalid_options')` naming each bad field. */
export function resolveOptions(input: VerifyOptionsInput | undefined): VerifyOptions {
  if (input === undefined) return DEFAULTS;
  const hit = cache.get(input);
  if (hit) return hit;
  const r = VerifyOptionsSchema.safeParse(input);
  if (!r.success) throw new MathVerifyError('invalid_options', `invalid verifier options: ${formatZodIssues(r.error.issues, input)}`, {}, { cause: r.error });
  cache.set(input, r.data);
  return r.data;
}
