/** What the credit metrics read: the rollouts of one frozen batch with their first-error labels, and the options. */
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { ReportError } from '../errors.js';
import type { MethodCredit } from './credit-map.js';

/** The first wrong line of a wrong completion: its kind and its tokens `[tokenStart, tokenEnd)` in the completion. */
export const FirstErrorSchema = z.object({
  /** copy, arithmetic, operation, missing step, ... (the labeller's names, kept as they are) */
  kind: z.string().min(1),
  tokenStart: z.int().nonnegative(),
  tokenEnd: z.int().nonnegative(),
  /**
   * the right step lines before it (`@rlvr/tasks`' `correctSteps`), where known: 0 makes the rollout `no_prefix`
   * even where tokens (a blank line, a preamble) precede its error line
   */
  correctSteps: z.int().nonnegative().optional(),
});

/** A rollout's label: its first error, `unlabelled` (the labeller could not parse it) or `correct`. */
const CreditLabelSchema = z.union([FirstErrorSchema, z.literal('unlabelled'), z.literal('correct')]);
export type CreditLabel = z.infer<typeof CreditLabelSchema>;

/** One rollout of the batch. Its tokens follow the previous rollout's in every method's arrays. */
export const CreditRolloutSchema = z.object({
  /** its index in the sampled batch (named in messages and kept in the JSON) */
  index: z.int().nonnegative(),
  /** its prompt (group) */
  group: z.int().nonnegative(),
  /** the verifier's verdict */
  correct: z.boolean(),
  label: CreditLabelSchema,
  /** completion tokens */
  tokens: z.int().nonnegative(),
});
export type CreditRollout = z.infer<typeof CreditRolloutSchema>;

/** The batch and every method's credit on it. */
export interface CreditInput {
  rollouts: readonly CreditRollout[];
  methods: readonly MethodCredit[];
}

export const CreditOptionsSchema = z.strictObject({
  /** normalised-position bins of the correct rollouts' profile (token t of T in bin floor(t * bins / T)) */
  bins: z.int().min(2).max(100).default(20),
  /** bins of the prefix and of the tokens after the error line, each, in the error-relative profile */
  errorBins: z.int().min(1).max(50).default(5),
  /** the middle of a chain: normalised positions t / T in [lo, hi) (the mid-chain weight and the U contrast) */
  middle: z
    .tuple([z.number().min(0).max(1), z.number().min(0).max(1)])
    .refine(([lo, hi]) => lo < hi, 'lo must be below hi')
    .default([1 / 3, 2 / 3]),
  /** bootstrap resamples of the rollouts (one set, shared by every metric and method, so differences pair up) */
  resamples: z.int().min(100).max(100_000).default(2000),
  /** the bootstrap's seed: the same seed and input give the same intervals */
  seed: z.int().default(0),
});
export type CreditOptions = z.input<typeof CreditOptionsSchema>;
export type CreditOptionsResolved = z.output<typeof CreditOptionsSchema>;

export function parseCreditOptions(options: CreditOptions = {}): CreditOptionsResolved {
  const r = CreditOptionsSchema.safeParse(options);
  if (!r.success) throw new ReportError('invalid_options', `invalid credit options: ${formatZodIssues(r.error.issues)}`);
  return r.data;
}

/** Why a rollout is or is not scored against its first error. */
export type RolloutStatus =
  /** wrong, labelled, at least one token before and one on the error line */
  | 'scored'
  /** wrong, and the labeller could not parse it */
  | 'unlabelled'
  /** wrong, and its first error is its first line: no correct prefix to compare with */
  | 'no_prefix'
  /** wrong, and its error line has no token (a missing step, say) */
  | 'empty_error'
  /** the verifier and the labeller disagree (wrong but labelled correct, or correct with an error) */
  | 'conflict'
  /** correct */
  | 'correct'
  /** a completion without tokens */
  | 'empty';

/** Token offsets [B + 1] and each rollout's status; every inconsistency is a `ReportError` naming the rollout. */
export function checkCreditInput(input: CreditInput): { offsets: Int32Array; status: RolloutStatus[] } {
  const B = input.rollouts.length;
  const offsets = new Int32Array(B + 1);
  const status: RolloutStatus[] = new Array(B);
  input.rollouts.forEach((raw, i) => {
    const r = CreditRolloutSchema.safeParse(raw);
    if (!r.success) throw new ReportError('invalid_input', `rollout ${i}: ${formatZodIssues(r.error.issues)}`, { field: 'rollouts' });
    const { tokens, label, correct, index } = r.data;
    offsets[i + 1] = offsets[i]! + tokens;
    if (typeof label === 'object' && (label.tokenStart > label.tokenEnd || label.tokenEnd > tokens))
      throw new ReportError(
        'invalid_input',
        `rollout ${index}: its error line [${label.tokenStart}, ${label.tokenEnd}) is not within its ${tokens} tokens`,
        { field: 'label' },
      );
    status[i] =
      tokens === 0
        ? 'empty'
        : correct
          ? label === 'correct'
            ? 'correct'
            : 'conflict'
          : label === 'unlabelled'
            ? 'unlabelled'
            : label === 'correct'
              ? 'conflict'
              : label.tokenEnd === label.tokenStart
                ? 'empty_error'
                : label.tokenStart === 0 || label.correctSteps === 0
                  ? 'no_prefix'
                  : 'scored';
  });
  const T = offsets[B]!;
  const names = new Set<string>();
  for (const m of input.methods) {
    if (names.has(m.name)) throw new ReportError('invalid_input', `method ${m.name} is given twice`, { field: 'methods' });
    names.add(m.name);
    for (const [field, arr, n] of [
      ['credit', m.credit, T],
      ['absAdvantage', m.absAdvantage, T],
      ['degenerate', m.degenerate, B],
    ] as const) {
      if (arr.length !== n)
        throw new ReportError('invalid_input', `method ${m.name}: ${field} has ${arr.length} entries but the rollouts need ${n}`, {
          field,
        });
    }
    for (let t = 0; t < T; t++) {
      if (!Number.isFinite(m.credit[t]!) || !Number.isFinite(m.absAdvantage[t]!)) {
        let i = 0;
        while (offsets[i + 1]! <= t) i++;
        throw new ReportError(
          'invalid_input',
          `method ${m.name}: rollout ${input.rollouts[i]!.index}, token ${t - offsets[i]!}: credit or |advantage| is not finite`,
          { field: 'credit' },
        );
      }
    }
  }
  if (input.methods.length === 0) throw new ReportError('invalid_input', 'no method to score', { field: 'methods' });
  return { offsets, status };
}
