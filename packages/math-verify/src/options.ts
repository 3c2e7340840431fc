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
    /**
     * Think blocks `[open, close]` of reasoning models. The answer is read after the last closing tag (a box inside
     * the block is a draft, even when nothing after it is boxed), and a block that opens and never closes (a trace
     * cut off by the token limit) has no answer: reward 0, `unclosed_reasoning`, unless an `<answer>` follows it.
     * A completion with no tag is read whole. `[]` turns this off.
     */
    thinkTags: z.array(z.tuple([z.string().min(1), z.string().min(1)])).default([
      ['<think>', '</think>'],
      ['<thinking>', '</thinking>'],
    ]),
    /**
     * `math` (default); `choice`: multiple-choice letters, read from a box, anchors, a leading `(C)`, or the last
     * letter; `auto`: `choice` for a gold that is a choice (`C`, `(C)`, `(C) Cecile`), `math` otherwise (one setting
     * for a mixed dataset).
     */
    mode: z.enum(['math', 'choice', 'auto']).default('math'),
    /** Letters that count as choices in `choice` mode. */
    choices: z
      .string()
      .regex(/^[A-Z]+$/)
      .default('ABCDEFGHIJ'),
    /**
     * An explicit relative tolerance for numeric comparisons that involve a decimal or an inexact value (`1e-4`:
     * `0.33333` for `\frac13`); integers and fractions against each other stay exact. Default null: no tolerance. Exact values (integers, fractions, decimals) then compare exactly, and
     * values that need floating point (pi, roots, logs, trig, sampled expressions) agree to `1e-9` relative, the
     * noise floor of the evaluator's double arithmetic.
     */
    relTol: z.number().positive().max(0.1).nullable().default(null),
    /**
     * The problem asks for this many decimal places ("to the nearest tenth": 1): a decimal or inexact value on either
     * side is rounded (half away from zero) to it before comparing. Null (default): no rounding. `problemRounding()`
     * reads it from a problem statement.
     */
    roundTo: z.number().int().min(0).max(12).nullable().default(null),
    /** `50\%` reads as 0.5 (`fraction`), as 50 (`strip`), or either (`either`, default: graders disagree). */
    percent: z.enum(['either', 'fraction', 'strip']).default('either'),
    /** A bare list `1, 2, 3` compares as a set (`unordered`, default) or in order (`ordered`, hendrycks MATH). */
    listOrder: z.enum(['unordered', 'ordered']).default('unordered'),
    /**
     * Accept a decimal that is the other side's value rounded (half away from zero, not truncated) to the decimal's
     * own digits, at least two significant ones (`1.414` for `\sqrt2`, `0.29` for `0.290243`). Off by default: a
     * reward must not pay for a numerically different value unless asked to. A gold written `7.0` is the integer 7.
     */
    roundedDecimals: z.boolean().default(false),
    /**
     * `1,22` and `1000,99` are decimals written with a comma (a European habit). Off by default: `56,76` is then two
     * quantities, and `56,144` (groups of three digits) is one number or two, as the other side reads.
     */
    decimalComma: z.boolean().default(false),
    /**
     * Accept an inequality pred for an interval gold (`-2 \le x \le 7` for `[-2, 7]`); gold inequality vs pred
     * interval is always accepted. Default: on when `strict` is false, off in strict mode (the default).
     */
    allowSetRelationComp: z.boolean().optional(),
    /** `false` also accepts the same expression in other variable names (`f(x)` for `f(y)`), as Math-Verify's `strict=False`. */
    strict: z.boolean().default(true),
    /**
     * Longer completions (and golds) are read from their last this-many characters (the first, with
     * `extract: 'first'`): a bound on the work, not a refusal, so a long completion's final box is still graded.
     */
    maxCompletionChars: z.number().int().positive().default(1_000_000),
    /**
     * Longer extracted answers (and gold answers) answer `answer_too_large` (`gold_too_large`). A bound on parse and
     * comparison work, sized so that a 100 x 100 matrix still grades in milliseconds.
     */
    maxAnswerChars: z.number().int().positive().default(100_000),
    /**
     * The problem statement (or the whole prompt): what it asks decides the unit (`How many feet`: an answer in
     * inches is wrong), the rounding (`to the nearest tenth`, unless `roundTo` is set), the options of a
     * multiple-choice question (a letter against the option's text), and with `strictForm` the form. Null
     * (default): the answer alone is graded. Analysed once per distinct statement (docs/grader-contract.md).
     */
    problem: z.string().nullable().default(null),
    /**
     * With `problem`: refuse an equal value in a form other than the one asked (`as a common fraction` or `in
     * simplest radical form` or `in terms of \pi`: no decimal; `as a decimal`: no fraction, root or pi;
     * `in interval notation`: no inequality). Off by default: most graders accept any equal value.
     */
    strictForm: z.boolean().default(false),
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
  if (!r.success)
    throw new MathVerifyError(
      'invalid_options',
      `invalid verifier options: ${formatZodIssues(r.error.issues, input)}`,
      {},
      { cause: r.error },
    );
  cache.set(input, r.data);
  return r.data;
}
