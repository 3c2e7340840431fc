import { type RolloutBatch, RolloutBatchSchema, SPAN_STRIDE, FINISH_REASONS } from './batch.js';
import { CoreError } from './errors.js';
import { formatZodIssues } from './config.js';

function fail(message: string, field: string, rollout?: number): never {
  throw new CoreError('invalid_batch', message, rollout === undefined ? { field } : { rollout, field });
}

function checkOffsets(offsets: Int32Array, field: string, n: number, dataLength: number, dataField: string): void {
  if (offsets.length !== n + 1) fail(`expected ${n + 1} offsets (numRollouts + 1), found ${offsets.length}`, field);
  if (offsets[0] !== 0) fail(`must start at 0, found ${offsets[0]}`, field);
  for (let i = 0; i < n; i++) {
    if (offsets[i + 1]! < offsets[i]!) fail(`offsets decrease (${offsets[i]} then ${offsets[i + 1]})`, field, i);
  }
  if (offsets[n] !== dataLength) fail(`last offset ${offsets[n]} does not match ${dataField}.length ${dataLength}`, field);
}

/**
 * Check every structural invariant of a batch and throw a `CoreError('invalid_batch')`
 * naming the field and, where it applies, the rollout index. Returns the batch.
 */
export function validateBatch(batch: RolloutBatch): RolloutBatch {
  const parsed = RolloutBatchSchema.safeParse(batch);
  if (!parsed.success) throw new CoreError('invalid_batch', formatZodIssues(parsed.error.issues));
  const n = batch.numRollouts;
  const sized: Array<[string, { length: number }, number]> = [
    ['groupIndex', batch.groupIndex, n],
    ['rewards', batch.rewards, n],
    ['finish', batch.finish, n],
    ['spans', batch.spans, n * SPAN_STRIDE],
  ];
  for (const [field, arr, want] of sized) {
    if (arr.length !== want) fail(`expected length ${want}, found ${arr.length}`, field);
  }
  checkOffsets(batch.promptOffsets, 'promptOffsets', n, batch.promptTokens.length, 'promptTokens');
  checkOffsets(batch.completionOffsets, 'completionOffsets', n, batch.completionTokens.length, 'completionTokens');
  const total = batch.completionTokens.length;
  if (batch.behaviorLogprobs !== undefined) {
    if (batch.behaviorLogprobs.length !== total)
      fail(`expected length ${total} (totalTokens), found ${batch.behaviorLogprobs.length}`, 'behaviorLogprobs');
  }
  checkReferences(batch);
  for (let i = 0; i < n; i++) {
    if (batch.groupIndex[i]! < 0) fail(`group id must be >= 0, found ${batch.groupIndex[i]}`, 'groupIndex', i);
    if (!Number.isFinite(batch.rewards[i]!)) fail(`reward must be finite, found ${batch.rewards[i]}`, 'rewards', i);
    if (batch.finish[i]! >= FINISH_REASONS.length)
      fail(`unknown finish code ${batch.finish[i]} (allowed 0..${FINISH_REASONS.length - 1}: ${FINISH_REASONS.join(', ')})`, 'finish', i);
    checkSpanRow(batch, i);
  }
  if (batch.behaviorLogprobs !== undefined) {
    for (let i = 0; i < n; i++) {
      for (let t = batch.completionOffsets[i]!; t < batch.completionOffsets[i + 1]!; t++) {
        const lp = batch.behaviorLogprobs[t]!;
        if (!(lp <= 0))
          fail(`log-prob of token ${t - batch.completionOffsets[i]!} must be <= 0 and not NaN, found ${lp}`, 'behaviorLogprobs', i);
      }
    }
  }
  return batch;
}

/** The optional reference columns: both or neither, offsets `[B + 1]` over `referenceTokens`, ids >= 0. */
function checkReferences(batch: RolloutBatch): void {
  const { referenceTokens: tokens, referenceOffsets: offsets } = batch;
  if (tokens === undefined && offsets === undefined) return;
  if (tokens === undefined || offsets === undefined)
    fail(
      'referenceTokens and referenceOffsets go together: give both or neither',
      tokens === undefined ? 'referenceTokens' : 'referenceOffsets',
    );
  checkOffsets(offsets, 'referenceOffsets', batch.numRollouts, tokens.length, 'referenceTokens');
  for (let i = 0; i < batch.numRollouts; i++) {
    for (let t = offsets[i]!; t < offsets[i + 1]!; t++)
      if (tokens[t]! < 0) fail(`token ${t - offsets[i]!} of the reference is ${tokens[t]}, must be >= 0`, 'referenceTokens', i);
  }
}

function checkSpanRow(batch: RolloutBatch, i: number): void {
  const o = i * SPAN_STRIDE;
  const s = batch.spans;
  const len = batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!;
  if (s[o]! < 0) {
    for (let k = 1; k < SPAN_STRIDE; k++)
      if (s[o + k] !== -1) fail('a rollout without an answer must have all six span slots at -1', 'spans', i);
    return;
  }
  for (let k = 0; k < SPAN_STRIDE; k++) {
    if (s[o + k]! < 0) fail('span slots must be all >= 0 or all -1', 'spans', i);
    if (k > 0 && s[o + k]! < s[o + k - 1]!) {
      fail(
        `spans must be ordered open <= content <= close without overlap, found [${Array.from(s.subarray(o, o + SPAN_STRIDE)).join(', ')}]`,
        'spans',
        i,
      );
    }
  }
  if (s[o + 5]! > len) fail(`close span ends at ${s[o + 5]} but the completion has ${len} tokens`, 'spans', i);
}
