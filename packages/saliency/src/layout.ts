import {
  CoreError,
  SPAN,
  SPAN_STRIDE,
  packRollouts,
  planMicroBatches as planCoreMicroBatches,
  scatterPacked,
  validateBatch,
  type PackedRollouts,
  type RolloutBatch,
} from '@rlvr/core';
import { SaliencyError } from './errors.js';

/**
 * Which completion tokens the answer loss covers: `content` the answer only, `boxed` the whole
 * `\boxed{...}` span (opening delimiter, content, closing delimiter) as the GRAIL reference does.
 */
export type AnswerSpan = 'content' | 'boxed';

/**
 * Which input position a completion token's score is read from. `own`: token j's own embedding
 * (column P + j); `previous`: the embedding one position earlier (column P - 1 + j), as the GRAIL
 * reference reads it (its window is the positions that *predict* the completion tokens).
 */
export type Alignment = 'own' | 'previous';

/** `[start, end)` of rollout i's answer tokens (relative to its completion), or null if it has none or it is empty. */
export function answerRange(batch: RolloutBatch, i: number, span: AnswerSpan): [number, number] | null {
  const o = i * SPAN_STRIDE;
  const s = batch.spans;
  if (s[o + SPAN.openStart]! < 0) return null;
  const r: [number, number] =
    span === 'content' ? [s[o + SPAN.contentStart]!, s[o + SPAN.contentEnd]!] : [s[o + SPAN.openStart]!, s[o + SPAN.closeEnd]!];
  return r[1] > r[0] ? r : null;
}

/**
 * Micro-batches of the rollouts that have completion tokens, under `tokenBudget` padded tokens
 * (core's plan: length-sorted, deterministic). A rollout with an empty prompt is an error: its
 * first completion token has no context to be predicted from.
 */
export function planMicroBatches(batch: RolloutBatch, tokenBudget: number): number[][] {
  const include: boolean[] = [];
  for (let i = 0; i < batch.numRollouts; i++) {
    const clen = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
    const plen = batch.promptOffsets[i + 1]! - batch.promptOffsets[i]!;
    if (clen > 0 && plen === 0)
      throw new SaliencyError('invalid_input', 'prompt is empty: the first completion token needs at least one token of context', {
        rollout: i,
        field: 'prompt',
      });
    include.push(clen > 0); // nothing to score or predict otherwise
  }
  return planCoreMicroBatches(batch, tokenBudget, include);
}

/**
 * Rollouts in core's decoder layout (`packRollouts`: completion token j at column P + j,
 * predicted at P - 1 + j), plus the answer tokens of the loss.
 */
export interface PackedRows extends PackedRollouts {
  /** `[n, C]` 1 for the answer tokens of the loss (all 0 in a row without an answer) */
  answerMask: Float32Array;
  /** `[n]` 1 where the row has at least one answer token */
  hasAnswer: Uint8Array;
}

/** Lay out rollouts `rows` of the batch (see `PackedRows`). */
export function packRows(batch: RolloutBatch, rows: readonly number[], span: AnswerSpan, padId = 0): PackedRows {
  const base = packRollouts(batch, rows, padId);
  const { n, C } = base;
  const answerMask = new Float32Array(n * C);
  const hasAnswer = new Uint8Array(n);
  rows.forEach((i, r) => {
    const cl = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
    const a = answerRange(batch, i, span);
    if (a !== null) {
      if (a[1] > cl)
        throw new SaliencyError('invalid_input', `answer span ends at ${a[1]} but the completion has ${cl} tokens`, {
          rollout: i,
          field: 'spans',
        });
      answerMask.fill(1, r * C + a[0], r * C + a[1]);
      hasAnswer[r] = 1;
    }
  });
  return { ...base, answerMask, hasAnswer };
}

/** Copy a packed `[n, C]` array back to the batch's per-token layout (`out` is `[totalTokens]`). */
export function scatterRows(batch: RolloutBatch, packed: PackedRows, values: ArrayLike<number>, out: Float32Array): void {
  scatterPacked(batch, packed, values, out);
}

/** First input column whose embedding scores completion token 0 (`own`: P, `previous`: P - 1). */
export function scoreOffset(packed: Pick<PackedRows, 'P'>, alignment: Alignment): number {
  return alignment === 'own' ? packed.P : packed.P - 1;
}

/**
 * Check a batch before any tensor work: its structure (`validateBatch` of core) and that every
 * token id is inside the model's vocabulary. Errors name the rollout and field.
 */
export function checkBatch(batch: RolloutBatch, vocabSize: number): void {
  try {
    validateBatch(batch);
  } catch (cause) {
    const loc = cause instanceof CoreError ? cause.location : {};
    throw new SaliencyError(
      'invalid_input',
      `invalid rollout batch: ${(cause as Error).message}`,
      { rollout: loc.rollout, field: loc.field },
      { cause },
    );
  }
  for (const [field, tokens, offsets] of [
    ['prompt', batch.promptTokens, batch.promptOffsets],
    ['completion', batch.completionTokens, batch.completionOffsets],
  ] as const) {
    for (let i = 0; i < batch.numRollouts; i++) {
      for (let t = offsets[i]!; t < offsets[i + 1]!; t++) {
        const id = tokens[t]!;
        if (id < 0 || id >= vocabSize)
          throw new SaliencyError('invalid_input', `${field}[${t - offsets[i]!}] = ${id} is not a token id in [0, ${vocabSize})`, {
            rollout: i,
            field,
          });
      }
    }
  }
}
