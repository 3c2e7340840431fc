import { CoreError, SPAN_STRIDE, validateBatch, type RolloutBatch } from '@rlvr/core';
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
  if (s[o]! < 0) return null;
  const r: [number, number] = span === 'content' ? [s[o + 2]!, s[o + 3]!] : [s[o]!, s[o + 5]!];
  return r[1] > r[0] ? r : null;
}

/**
 * Split rollouts into micro-batches whose padded size (rows x (longest prompt + longest
 * completion)) stays within `tokenBudget`. Rollouts are taken in length order so that padding
 * stays small; ties keep index order. A rollout over the budget gets a micro-batch of its own.
 * (The same plan as `@rlvr/trainer`'s, kept here so that saliency does not depend on the trainer.)
 */
export function planMicroBatches(batch: RolloutBatch, tokenBudget: number): number[][] {
  const plen = (i: number) => batch.promptOffsets[i + 1]! - batch.promptOffsets[i]!;
  const clen = (i: number) => batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
  const idx: number[] = [];
  for (let i = 0; i < batch.numRollouts; i++) {
    if (clen(i) === 0) continue; // nothing to score or predict
    if (plen(i) === 0) throw new SaliencyError('invalid_input', 'prompt is empty: the first completion token needs at least one token of context', { rollout: i, field: 'prompt' });
    idx.push(i);
  }
  idx.sort((a, b) => plen(a) + clen(a) - (plen(b) + clen(b)) || a - b);
  const out: number[][] = [];
  let cur: number[] = [];
  let maxP = 0;
  let maxC = 0;
  for (const i of idx) {
    const p = Math.max(maxP, plen(i));
    const c = Math.max(maxC, clen(i));
    if (cur.length > 0 && (cur.length + 1) * (p + c) > tokenBudget) {
      out.push(cur);
      cur = [];
      maxP = 0;
      maxC = 0;
    }
    cur.push(i);
    maxP = Math.max(maxP, plen(i));
    maxC = Math.max(maxC, clen(i));
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Rollouts laid out for the decoder: prompts left-padded to P, completions right-padded to C, so
 * that completion token j of every row sits at column P + j and is predicted by the hidden state
 * at column P - 1 + j. Row-major arrays; n rows, S = P + C columns.
 */
export interface PackedRows {
  /** rollout index of each row */
  rollouts: number[];
  n: number;
  P: number;
  C: number;
  S: number;
  /** `[n, S]` token ids (`padId` where masked) */
  ids: Int32Array;
  /** `[n, S]` 1 for real tokens */
  attentionMask: Float32Array;
  /** `[n, C]` 1 for real completion tokens */
  completionMask: Float32Array;
  /** `[n, C]` 1 for the answer tokens of the loss (all 0 in a row without an answer) */
  answerMask: Float32Array;
  /** `[n]` 1 where the row has at least one answer token */
  hasAnswer: Uint8Array;
}

/** Lay out rollouts `rows` of the batch (see `PackedRows`). */
export function packRows(batch: RolloutBatch, rows: readonly number[], span: AnswerSpan, padId = 0): PackedRows {
  let P = 0;
  let C = 0;
  for (const i of rows) {
    P = Math.max(P, batch.promptOffsets[i + 1]! - batch.promptOffsets[i]!);
    C = Math.max(C, batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!);
  }
  const n = rows.length;
  const S = P + C;
  const ids = new Int32Array(n * S).fill(padId);
  const attentionMask = new Float32Array(n * S);
  const completionMask = new Float32Array(n * C);
  const answerMask = new Float32Array(n * C);
  const hasAnswer = new Uint8Array(n);
  rows.forEach((i, r) => {
    const p0 = batch.promptOffsets[i]!;
    const pl = batch.promptOffsets[i + 1]! - p0;
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    ids.set(batch.promptTokens.subarray(p0, p0 + pl), r * S + P - pl);
    ids.set(batch.completionTokens.subarray(c0, c0 + cl), r * S + P);
    attentionMask.fill(1, r * S + P - pl, r * S + P + cl);
    completionMask.fill(1, r * C, r * C + cl);
    const a = answerRange(batch, i, span);
    if (a !== null) {
      if (a[1] > cl) throw new SaliencyError('invalid_input', `answer span ends at ${a[1]} but the completion has ${cl} tokens`, { rollout: i, field: 'spans' });
      answerMask.fill(1, r * C + a[0], r * C + a[1]);
      hasAnswer[r] = 1;
    }
  });
  return { rollouts: [...rows], n, P, C, S, ids, attentionMask, completionMask, answerMask, hasAnswer };
}

/** Copy a packed `[n, C]` array back to the batch's per-token layout (`out` is `[totalTokens]`). */
export function scatterRows(batch: RolloutBatch, packed: PackedRows, values: ArrayLike<number>, out: Float32Array): void {
  packed.rollouts.forEach((i, r) => {
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    for (let t = 0; t < cl; t++) out[c0 + t] = values[r * packed.C + t]!;
  });
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
    throw new SaliencyError('invalid_input', `invalid rollout batch: ${(cause as Error).message}`, { rollout: loc.rollout, field: loc.field }, { cause });
  }
  for (const [field, tokens, offsets] of [
    ['prompt', batch.promptTokens, batch.promptOffsets],
    ['completion', batch.completionTokens, batch.completionOffsets],
  ] as const) {
    for (let i = 0; i < batch.numRollouts; i++) {
      for (let t = offsets[i]!; t < offsets[i + 1]!; t++) {
        const id = tokens[t]!;
        if (id < 0 || id >= vocabSize) throw new SaliencyError('invalid_input', `${field}[${t - offsets[i]!}] = ${id} is not a token id in [0, ${vocabSize})`, { rollout: i, field });
      }
    }
  }
}
