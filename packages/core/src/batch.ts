import { z } from 'zod';
import { CoreError } from './errors.js';

/**
 * Shapes used across rlvr (see the README): B rollouts, G rollouts per group,
 * T tokens, V vocabulary, D hidden size. `totalTokens` = sum of completion lengths.
 */

/** Why a completion ended. Stored as a byte in `RolloutBatch.finish`. */
export const FinishReasonSchema = z.enum(['stop', 'length', 'error']);
export type FinishReason = z.infer<typeof FinishReasonSchema>;

/** Byte codes of `FinishReason`, in the order of the enum. */
export const FINISH_CODES: Readonly<Record<FinishReason, number>> = { stop: 0, length: 1, error: 2 };
export const FINISH_REASONS: readonly FinishReason[] = FinishReasonSchema.options;

/** Half-open token range `[start, end)` relative to the start of a completion. */
export const TokenRangeSchema = z
  .tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])
  .refine(([s, e]) => s <= e, { message: 'range start must not exceed its end' });
export type TokenRange = z.infer<typeof TokenRangeSchema>;

/**
 * Where the final answer sits in a completion, in tokens: the opening delimiter
 * (`\boxed{`), the answer content, and the closing delimiter (`}`). The first
 * post-answer token is `close[1]`. Ranges are in order and do not overlap.
 */
export const AnswerSpansSchema = z
  .object({ open: TokenRangeSchema, content: TokenRangeSchema, close: TokenRangeSchema })
  .strict()
  .refine((s) => s.open[1] <= s.content[0] && s.content[1] <= s.close[0], {
    message: 'spans must be ordered: open, then content, then close, without overlap',
  });
export type AnswerSpans = z.infer<typeof AnswerSpansSchema>;

/** Int32 slots per rollout in `RolloutBatch.spans`: openStart, openEnd, contentStart, contentEnd, closeStart, closeEnd. */
export const SPAN_STRIDE = 6;

/**
 * The slot of each span bound inside a rollout's `SPAN_STRIDE` slots: rollout i's content starts at
 * `spans[i * SPAN_STRIDE + SPAN.contentStart]`. `closeEnd` is also the first post-answer token.
 */
export const SPAN = { openStart: 0, openEnd: 1, contentStart: 2, contentEnd: 3, closeStart: 4, closeEnd: 5 } as const;

/**
 * The columnar, ragged batch of rollouts every package shares. A batch of
 * thousands of completions is a handful of typed arrays.
 *
 * Rollout i's completion is `completionTokens[completionOffsets[i] .. completionOffsets[i+1])`,
 * likewise its prompt. Group ids are dense small integers: rollouts answering the
 * same prompt share one. Per-token arrays (`behaviorLogprobs`, signals,
 * advantages) are aligned with `completionTokens`.
 */
export const RolloutBatchSchema = z.object({
  numRollouts: z.number().int().nonnegative(),
  /** [B] group (prompt) of each rollout, >= 0 */
  groupIndex: z.instanceof(Int32Array),
  /** [sum of prompt lengths] */
  promptTokens: z.instanceof(Int32Array),
  /** [B + 1] */
  promptOffsets: z.instanceof(Int32Array),
  /** [totalTokens] */
  completionTokens: z.instanceof(Int32Array),
  /** [B + 1] */
  completionOffsets: z.instanceof(Int32Array),
  /** [totalTokens] log-probs of the sampled tokens under the behaviour policy */
  behaviorLogprobs: z.instanceof(Float32Array).optional(),
  /** [B] */
  rewards: z.instanceof(Float32Array),
  /** [B] FINISH_CODES */
  finish: z.instanceof(Uint8Array),
  /** [B * SPAN_STRIDE] answer spans, all -1 where a rollout has no answer */
  spans: z.instanceof(Int32Array),
  /**
   * [sum of reference lengths] token ids of each rollout's reference (expert, worked) solution to its
   * problem, tokenised as a completion would be; optional, with `referenceOffsets`. Rollout i's is
   * `referenceTokens[referenceOffsets[i] .. referenceOffsets[i+1])`; empty where its problem has none.
   */
  referenceTokens: z.instanceof(Int32Array).optional(),
  /** [B + 1] offsets into `referenceTokens`: present exactly when it is */
  referenceOffsets: z.instanceof(Int32Array).optional(),
});
export type RolloutBatch = z.infer<typeof RolloutBatchSchema>;

/** Number of completion tokens in the batch. */
export function totalTokens(batch: RolloutBatch): number {
  return batch.completionOffsets[batch.numRollouts] ?? 0;
}

/** Completion length of rollout i. */
export function completionLength(batch: RolloutBatch, i: number): number {
  return batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
}

/** Number of groups: one more than the largest group id (0 for an empty batch). */
export function numGroups(batch: Pick<RolloutBatch, 'groupIndex'>): number {
  let max = -1;
  for (let i = 0; i < batch.groupIndex.length; i++) if (batch.groupIndex[i]! > max) max = batch.groupIndex[i]!;
  return max + 1;
}

/** The answer spans of rollout i, or null when it has none. */
export function getSpans(batch: Pick<RolloutBatch, 'spans'>, i: number): AnswerSpans | null {
  const o = i * SPAN_STRIDE;
  const s = batch.spans;
  if (s[o + SPAN.openStart]! < 0) return null;
  return {
    open: [s[o + SPAN.openStart]!, s[o + SPAN.openEnd]!],
    content: [s[o + SPAN.contentStart]!, s[o + SPAN.contentEnd]!],
    close: [s[o + SPAN.closeStart]!, s[o + SPAN.closeEnd]!],
  };
}

/** Write rollout i's spans into a span table (null writes -1s). */
export function setSpans(spans: Int32Array, i: number, value: AnswerSpans | null): void {
  const o = i * SPAN_STRIDE;
  if (value === null) {
    spans.fill(-1, o, o + SPAN_STRIDE);
    return;
  }
  spans[o + SPAN.openStart] = value.open[0];
  spans[o + SPAN.openEnd] = value.open[1];
  spans[o + SPAN.contentStart] = value.content[0];
  spans[o + SPAN.contentEnd] = value.content[1];
  spans[o + SPAN.closeStart] = value.close[0];
  spans[o + SPAN.closeEnd] = value.close[1];
}

/**
 * Rollout i's reference solution `[S]` (a view into `referenceTokens`): a `CoreError('missing_reference')`
 * naming the rollout and `neededBy` when the batch carries no references or rollout i's is empty.
 */
export function referenceOf(batch: Pick<RolloutBatch, 'referenceTokens' | 'referenceOffsets'>, i: number, neededBy = 'caller'): Int32Array {
  const { referenceTokens: tokens, referenceOffsets: o } = batch;
  if (tokens === undefined || o === undefined)
    throw new CoreError(
      'missing_reference',
      `${neededBy} needs each rollout's reference solution, but the batch carries none (a problem's solution: the synthetic task's, or a data file's solution field)`,
      { rollout: i, field: 'referenceTokens' },
    );
  if (o[i + 1]! <= o[i]!)
    throw new CoreError('missing_reference', `${neededBy} needs a reference solution, but this rollout's problem has none`, {
      rollout: i,
      field: 'referenceTokens',
    });
  return tokens.subarray(o[i]!, o[i + 1]!);
}

/** Whether rollout i has an answer span. */
export function hasAnswer(batch: Pick<RolloutBatch, 'spans'>, i: number): boolean {
  return batch.spans[i * SPAN_STRIDE + SPAN.openStart]! >= 0;
}
