import { z } from 'zod';
import { AnswerSpansSchema, SPAN_STRIDE, Signals, setSpans, validateBatch, type RolloutBatch, type SignalName } from '@rlvr/core';
import { AdvantagesError } from './errors.js';

/** Most completion tokens a batch can hold: its offsets are `Int32Array`s. */
const MAX_TOKENS = 2 ** 31 - 1;

/**
 * One rollout in the language-neutral JSONL form the `rlvr-advantages` CLI reads.
 * Token ranges are relative to the completion, half-open; `saliency` has `length`
 * entries and feeds the one per-token signal the estimator needs.
 */
export const InteropRowSchema = z.strictObject({
  group: z.union([z.string(), z.number().finite()]),
  reward: z.number().finite(),
  /** completion tokens; at most 2^31 - 1 (the batch's offsets are int32) */
  length: z.number().int().nonnegative().max(MAX_TOKENS),
  saliency: z.array(z.number()).optional(),
  spans: AnswerSpansSchema.nullable().optional(),
});
export type InteropRow = z.output<typeof InteropRowSchema>;

/** Checks that need more than one field; returns the problem or null. */
export function interopRowProblem(row: InteropRow, needsSaliency: boolean): { field: string; message: string } | null {
  if (row.saliency !== undefined) {
    if (row.saliency.length !== row.length)
      return { field: 'saliency', message: `has ${row.saliency.length} entries but length is ${row.length}` };
    for (let t = 0; t < row.saliency.length; t++) {
      const s = row.saliency[t]!;
      if (!(s >= 0 && s < Infinity)) return { field: `saliency.${t}`, message: `scores must be finite and >= 0, found ${s}` };
    }
  } else if (needsSaliency && row.length > 0) {
    return { field: 'saliency', message: 'missing: the estimator needs a per-token saliency score' };
  }
  if (row.spans && row.spans.close[1] > row.length) {
    return { field: 'spans', message: `close span ends at ${row.spans.close[1]} but length is ${row.length}` };
  }
  return null;
}

/**
 * Build a `RolloutBatch` (completion token ids are 0: estimators never read them)
 * and `Signals` from interop rows. Group values become dense ids in order of first
 * appearance. Every name in `signalNames` is filled from the rows' `saliency`.
 * Shapes: B = rows.length, T = sum of lengths.
 */
export function interopBatch(
  rows: readonly InteropRow[],
  signalNames: readonly SignalName[] = [],
): { batch: RolloutBatch; signals: Signals } {
  const B = rows.length;
  const ids = new Map<string, number>();
  const batch: RolloutBatch = {
    numRollouts: B,
    groupIndex: new Int32Array(B),
    promptTokens: new Int32Array(0),
    promptOffsets: new Int32Array(B + 1),
    completionTokens: new Int32Array(0),
    completionOffsets: new Int32Array(B + 1),
    rewards: new Float32Array(B),
    finish: new Uint8Array(B),
    spans: new Int32Array(B * SPAN_STRIDE),
  };
  let total = 0;
  for (let i = 0; i < B; i++) {
    const row = rows[i]!;
    const key = JSON.stringify(row.group);
    let id = ids.get(key);
    if (id === undefined) {
      id = ids.size;
      ids.set(key, id);
    }
    batch.groupIndex[i] = id;
    batch.rewards[i] = row.reward;
    total += row.length;
    if (total > MAX_TOKENS)
      throw new AdvantagesError(
        'invalid_input',
        `the rows hold more than ${MAX_TOKENS} completion tokens in all (the batch's offsets are int32)`,
        { rollout: i, field: 'length' },
      );
    batch.completionOffsets[i + 1] = total;
    setSpans(batch.spans, i, row.spans ?? null);
  }
  batch.completionTokens = new Int32Array(total);
  validateBatch(batch);
  const signals = new Signals(total);
  for (const name of signalNames) {
    const values = new Float32Array(total);
    for (let i = 0; i < B; i++) {
      const s = rows[i]!.saliency;
      if (s === undefined) {
        if (rows[i]!.length > 0)
          throw new AdvantagesError('invalid_input', `signal ${name} needs a saliency array`, { rollout: i, field: 'saliency' });
        continue;
      }
      values.set(s, batch.completionOffsets[i]!);
    }
    signals.set(name, values);
  }
  return { batch, signals };
}
