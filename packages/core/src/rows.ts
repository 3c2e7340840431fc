import { z } from 'zod';
import {
  AnswerSpansSchema,
  FINISH_CODES,
  FINISH_REASONS,
  FinishReasonSchema,
  type RolloutBatch,
  SPAN_STRIDE,
  getSpans,
  setSpans,
} from './batch.js';
import { CoreError } from './errors.js';
import { formatZodIssues } from './config.js';
import { validateBatch } from './validate.js';

const TokenIds = z.array(z.number().int().nonnegative());

/** One rollout as a plain object: the row form of `RolloutBatch`. */
export const RolloutRowSchema = z
  .object({
    /** group id: rollouts answering the same prompt share one */
    group: z.number().int().nonnegative(),
    prompt: TokenIds.default([]),
    completion: TokenIds,
    reward: z.number().finite(),
    finish: FinishReasonSchema.default('stop'),
    behaviorLogprobs: z.array(z.number()).optional(),
    spans: AnswerSpansSchema.nullable().default(null),
    /** token ids of the problem's reference solution (`RolloutBatch.referenceTokens`); rows without one get an empty one */
    reference: TokenIds.optional(),
  })
  .strict();
export type RolloutRow = z.output<typeof RolloutRowSchema>;
/** What a caller may pass: fields with defaults may be left out. */
export type RolloutRowInput = z.input<typeof RolloutRowSchema>;

/**
 * Build a columnar batch from rows. Every row is parsed, and the first bad one
 * throws `CoreError('invalid_row')` naming its index and field. `behaviorLogprobs`
 * must be present on all rows or none.
 */
export function batchFromRows(rows: readonly RolloutRowInput[]): RolloutBatch {
  const parsed: RolloutRow[] = rows.map((row, i) => {
    const r = RolloutRowSchema.safeParse(row);
    if (!r.success) {
      const field = r.error.issues[0]?.path.map(String).join('.') || undefined;
      throw new CoreError('invalid_row', formatZodIssues(r.error.issues), field ? { rollout: i, field } : { rollout: i });
    }
    return r.data;
  });
  const n = parsed.length;
  const withLp = n > 0 && parsed[0]!.behaviorLogprobs !== undefined;
  const withRef = parsed.some((r) => r.reference !== undefined);
  let promptTotal = 0;
  let total = 0;
  let refTotal = 0;
  parsed.forEach((r, i) => {
    promptTotal += r.prompt.length;
    total += r.completion.length;
    refTotal += r.reference?.length ?? 0;
    if ((r.behaviorLogprobs !== undefined) !== withLp) {
      throw new CoreError('invalid_row', 'behaviorLogprobs must be given on every row or on none', {
        rollout: i,
        field: 'behaviorLogprobs',
      });
    }
    if (r.behaviorLogprobs !== undefined && r.behaviorLogprobs.length !== r.completion.length) {
      throw new CoreError(
        'invalid_row',
        `expected ${r.completion.length} log-probs (one per completion token), found ${r.behaviorLogprobs.length}`,
        { rollout: i, field: 'behaviorLogprobs' },
      );
    }
    if (r.spans !== null && r.spans.close[1] > r.completion.length) {
      throw new CoreError('invalid_row', `close span ends at ${r.spans.close[1]} but the completion has ${r.completion.length} tokens`, {
        rollout: i,
        field: 'spans',
      });
    }
  });
  const batch = allocateBatch(n, promptTotal, total, withLp, withRef ? refTotal : -1);
  let p = 0;
  let c = 0;
  parsed.forEach((r, i) => {
    if (batch.referenceTokens && batch.referenceOffsets) {
      batch.referenceTokens.set(r.reference ?? [], batch.referenceOffsets[i]!);
      batch.referenceOffsets[i + 1] = batch.referenceOffsets[i]! + (r.reference?.length ?? 0);
    }
    batch.groupIndex[i] = r.group;
    batch.promptTokens.set(r.prompt, p);
    p += r.prompt.length;
    batch.promptOffsets[i + 1] = p;
    batch.completionTokens.set(r.completion, c);
    if (batch.behaviorLogprobs && r.behaviorLogprobs) batch.behaviorLogprobs.set(r.behaviorLogprobs, c);
    c += r.completion.length;
    batch.completionOffsets[i + 1] = c;
    batch.rewards[i] = r.reward;
    batch.finish[i] = FINISH_CODES[r.finish];
    setSpans(batch.spans, i, r.spans);
  });
  return validateBatch(batch);
}

/** The inverse of `batchFromRows`: one plain object per rollout. */
export function batchToRows(batch: RolloutBatch): RolloutRow[] {
  const rows: RolloutRow[] = [];
  for (let i = 0; i < batch.numRollouts; i++) {
    const c0 = batch.completionOffsets[i]!;
    const c1 = batch.completionOffsets[i + 1]!;
    const row: RolloutRow = {
      group: batch.groupIndex[i]!,
      prompt: Array.from(batch.promptTokens.subarray(batch.promptOffsets[i]!, batch.promptOffsets[i + 1]!)),
      completion: Array.from(batch.completionTokens.subarray(c0, c1)),
      reward: batch.rewards[i]!,
      finish: FINISH_REASONS[batch.finish[i]!]!,
      spans: getSpans(batch, i),
    };
    if (batch.behaviorLogprobs) row.behaviorLogprobs = Array.from(batch.behaviorLogprobs.subarray(c0, c1));
    if (batch.referenceTokens && batch.referenceOffsets)
      row.reference = Array.from(batch.referenceTokens.subarray(batch.referenceOffsets[i]!, batch.referenceOffsets[i + 1]!));
    rows.push(row);
  }
  return rows;
}

/**
 * The batch of rollouts `rows` of `batch` (in that order; group ids, rewards, finish codes, spans,
 * behaviour log-probs and reference solutions kept), e.g. to recompute signals for the rows of one mini-batch only.
 * Its completion token k of rollout n is token `completionOffsets[rows[n]] + k` of `batch`.
 */
export function takeRollouts(batch: RolloutBatch, rows: readonly number[]): RolloutBatch {
  for (const i of rows)
    if (!Number.isInteger(i) || i < 0 || i >= batch.numRollouts)
      throw new CoreError('invalid_row', `no rollout ${i} in a batch of ${batch.numRollouts}`, { rollout: i });
  return gatherRows(
    rows.map((row) => ({ from: batch, row, group: batch.groupIndex[row]! })),
    [batch],
  );
}

/** One row of a gathered batch: rollout `row` of `from`, under group id `group`. */
export interface RowPick {
  from: RolloutBatch;
  row: number;
  group: number;
}

/**
 * A batch of the picked rows (of the `sources` batches), in order, each under its `group`. Behaviour
 * log-probs when every source has them (the caller checks they all do or none does); reference
 * columns when any source has them, a row of a source without them getting an empty reference.
 */
export function gatherRows(picks: readonly RowPick[], sources: readonly RolloutBatch[]): RolloutBatch {
  let promptTotal = 0;
  let total = 0;
  let refTotal = 0;
  for (const { from, row: i } of picks) {
    promptTotal += from.promptOffsets[i + 1]! - from.promptOffsets[i]!;
    total += from.completionOffsets[i + 1]! - from.completionOffsets[i]!;
    const ro = from.referenceOffsets;
    if (ro) refTotal += ro[i + 1]! - ro[i]!;
  }
  const withLogprobs = sources.every((b) => b.behaviorLogprobs !== undefined);
  const withRefs = sources.some((b) => b.referenceOffsets !== undefined);
  const out = allocateBatch(picks.length, promptTotal, total, withLogprobs, withRefs ? refTotal : -1);
  picks.forEach(({ from, row: i, group }, k) => {
    if (out.referenceTokens && out.referenceOffsets) {
      const ro = from.referenceOffsets;
      const len = ro ? ro[i + 1]! - ro[i]! : 0;
      if (ro) out.referenceTokens.set(from.referenceTokens!.subarray(ro[i]!, ro[i + 1]!), out.referenceOffsets[k]!);
      out.referenceOffsets[k + 1] = out.referenceOffsets[k]! + len;
    }
    const [p0, p1, c0, c1] = [
      from.promptOffsets[i]!,
      from.promptOffsets[i + 1]!,
      from.completionOffsets[i]!,
      from.completionOffsets[i + 1]!,
    ];
    out.groupIndex[k] = group;
    out.promptTokens.set(from.promptTokens.subarray(p0, p1), out.promptOffsets[k]!);
    out.promptOffsets[k + 1] = out.promptOffsets[k]! + (p1 - p0);
    out.completionTokens.set(from.completionTokens.subarray(c0, c1), out.completionOffsets[k]!);
    if (out.behaviorLogprobs) out.behaviorLogprobs.set(from.behaviorLogprobs!.subarray(c0, c1), out.completionOffsets[k]!);
    out.completionOffsets[k + 1] = out.completionOffsets[k]! + (c1 - c0);
    out.rewards[k] = from.rewards[i]!;
    out.finish[k] = from.finish[i]!;
    out.spans.set(from.spans.subarray(i * SPAN_STRIDE, (i + 1) * SPAN_STRIDE), k * SPAN_STRIDE);
  });
  return out;
}

/** A zeroed batch of `n` rollouts with room for `promptTotal` prompt and `total` completion tokens (and `refTotal` reference tokens; -1: no reference columns). */
function allocateBatch(n: number, promptTotal: number, total: number, withLogprobs: boolean, refTotal: number): RolloutBatch {
  const batch: RolloutBatch = {
    numRollouts: n,
    groupIndex: new Int32Array(n),
    promptTokens: new Int32Array(promptTotal),
    promptOffsets: new Int32Array(n + 1),
    completionTokens: new Int32Array(total),
    completionOffsets: new Int32Array(n + 1),
    rewards: new Float32Array(n),
    finish: new Uint8Array(n),
    spans: new Int32Array(n * SPAN_STRIDE),
  };
  if (withLogprobs) batch.behaviorLogprobs = new Float32Array(total);
  if (refTotal >= 0) {
    batch.referenceTokens = new Int32Array(refTotal);
    batch.referenceOffsets = new Int32Array(n + 1);
  }
  return batch;
}
