import { batchFromRows } from '@rlvr/core';
import { describe, expect, it } from 'vitest';
import { SampleRecordSchema } from './run-dir.js';
import { sampleRecords } from './sample-records.js';

// 3 groups of 4 rollouts; rollout i has i + 1 tokens, ids 10i, 10i + 1, ...; the last of each group answers in a box at tokens 0-2
const rows = Array.from({ length: 12 }, (_, i) => ({
  group: Math.floor(i / 4),
  completion: Array.from({ length: i + 3 }, (_, t) => 10 * i + t),
  reward: i % 4 === 3 ? 1 : 0,
  spans: i % 4 === 3 ? { open: [0, 1] as [number, number], content: [1, 2] as [number, number], close: [2, 3] as [number, number] } : null,
}));
const batch = batchFromRows(rows);
const weights = Float32Array.from({ length: batch.completionTokens.length }, (_, t) => t / 100);
const adv = { sequenceAdvantages: Float64Array.from({ length: 12 }, (_, i) => i - 5.5), weights };
const questions = ['q0', 'q1', 'q2'];

describe('sampleRecords', () => {
  it('picks the first and the last rollout of groups spread over the batch, with their tokens, weights and spans', () => {
    const recs = sampleRecords(7, batch, adv, questions, (id) => `<${id}>`, 4, 4);
    // k = 0..3 -> groups 0, 0, 1, 2 (floor(k * 12 / 4 / 4)); first, last, first, last
    expect(recs.map((r) => r.tokens[0])).toEqual(['<0>', '<30>', '<40>', '<110>']);
    const last = recs[3]!;
    expect(last).toMatchObject({ step: 7, group: 2, reward: 1, correct: true, advantage: 5.5, prompt: 'q2' });
    expect(last.tokens).toEqual(Array.from({ length: 14 }, (_, t) => `<${110 + t}>`));
    const c0 = batch.completionOffsets[11]!;
    expect(last.weights).toEqual(Array.from(weights.subarray(c0, c0 + 14)));
    expect(last.spans).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
    expect(recs[0]!.spans).toBeNull();
    // what the report reads back
    for (const r of recs) expect(SampleRecordSchema.safeParse(r).success).toBe(true);
  });

  it('never more records than rollouts, none twice', () => {
    const recs = sampleRecords(1, batch, adv, questions, String, 4, 50);
    expect(recs.length).toBeLessThanOrEqual(12);
    expect(new Set(recs.map((r) => r.tokens[0])).size).toBe(recs.length);
  });
});
