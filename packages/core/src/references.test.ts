import { describe, expect, it } from 'vitest';
import { referenceOf } from './batch.js';
import { batchFromRows, batchToRows, takeRollouts } from './rows.js';
import { validateBatch } from './validate.js';

const rows = [
  { group: 0, prompt: [1], completion: [2, 3], reward: 1, reference: [7, 8, 9] },
  { group: 0, prompt: [1], completion: [4], reward: 0, reference: [7, 8, 9] },
  { group: 1, prompt: [5], completion: [6], reward: 0 },
];

describe('reference solutions on a batch', () => {
  it('batchFromRows lays them out per rollout (empty where a row has none); rows and takeRollouts keep them', () => {
    const b = batchFromRows(rows);
    expect(Array.from(b.referenceOffsets!)).toEqual([0, 3, 6, 6]);
    expect(Array.from(referenceOf(b, 1))).toEqual([7, 8, 9]);
    expect(batchToRows(b).map((r) => r.reference)).toEqual([[7, 8, 9], [7, 8, 9], []]);
    const t = takeRollouts(b, [2, 1]);
    expect(Array.from(t.referenceOffsets!)).toEqual([0, 0, 3]);
    expect(Array.from(t.referenceTokens!)).toEqual([7, 8, 9]);
    expect(batchFromRows(rows.map(({ reference: _r, ...r }) => r)).referenceTokens).toBeUndefined();
  });

  it('referenceOf names the rollout when the batch has none, or its problem has none', () => {
    const b = batchFromRows(rows);
    expect(() => referenceOf(b, 2, 'backend gar')).toThrow(
      "rollout 2, field referenceTokens: backend gar needs a reference solution, but this rollout's problem has none",
    );
    const none = batchFromRows(rows.slice(2).map(({ group, prompt, completion, reward }) => ({ group, prompt, completion, reward })));
    expect(() => referenceOf(none, 0, 'backend gar')).toThrow(
      /rollout 0, field referenceTokens: backend gar needs each rollout's reference solution, but the batch carries none/,
    );
    try {
      referenceOf(none, 0);
    } catch (e) {
      expect((e as { code: string }).code).toBe('missing_reference');
    }
  });

  it('validateBatch: both columns or neither, offsets [B + 1] over the tokens, ids >= 0, naming the rollout', () => {
    const b = batchFromRows(rows);
    expect(() => validateBatch({ ...b, referenceOffsets: undefined })).toThrow(
      'field referenceOffsets: referenceTokens and referenceOffsets go together',
    );
    expect(() => validateBatch({ ...b, referenceOffsets: Int32Array.from([0, 3, 6]) })).toThrow(
      'field referenceOffsets: expected 4 offsets',
    );
    expect(() => validateBatch({ ...b, referenceOffsets: Int32Array.from([0, 3, 2, 6]) })).toThrow(
      'rollout 1, field referenceOffsets: offsets decrease',
    );
    expect(() => validateBatch({ ...b, referenceTokens: Int32Array.from([7, 8, 9, 7, -1, 9]) })).toThrow(
      'rollout 1, field referenceTokens: token 1 of the reference is -1, must be >= 0',
    );
  });
});
