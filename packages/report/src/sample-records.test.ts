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
  it('picks a correct and a wrong rollout of groups spread over the batch, with their tokens, weights and spans', () => {
    const recs = sampleRecords(7, batch, adv, questions, (id) => `<${id}>`, 4, 4);
    // 2 pairs from the 3 groups, all of them mixed: groups 0 and 1 (floor(k * 3 / 2)), first wrong and first correct
    expect(recs.map((r) => r.tokens[0])).toEqual(['<0>', '<30>', '<40>', '<70>']);
    const last = recs[3]!;
    expect(last).toMatchObject({ step: 7, group: 1, reward: 1, correct: true, advantage: 1.5, prompt: 'q1' });
    expect(last.tokens).toEqual(Array.from({ length: 10 }, (_, t) => `<${70 + t}>`));
    const c0 = batch.completionOffsets[7]!;
    expect(last.weights).toEqual(Array.from(weights.subarray(c0, c0 + 10)));
    expect(last.spans).toEqual({ open: [0, 1], content: [1, 2], close: [2, 3] });
    expect(recs[0]!.spans).toBeNull();
    // what the report reads back
    for (const r of recs) expect(SampleRecordSchema.safeParse(r).success).toBe(true);
  });

  it('shows a routed group under the question it was re-sampled on, flagged routed', () => {
    const recs = sampleRecords(7, batch, adv, questions, String, 4, 4, { routed: [1], routedQuestions: ['q1 scaffolded'] });
    expect(recs.map((r) => [r.group, r.prompt, r.routed])).toEqual([
      [0, 'q0', false],
      [0, 'q0', false],
      [1, 'q1 scaffolded', true],
      [1, 'q1 scaffolded', true],
    ]);
    for (const r of recs) expect(SampleRecordSchema.safeParse(r).success).toBe(true);
    expect(sampleRecords(7, batch, adv, questions, String, 4, 4).every((r) => r.routed === false)).toBe(true);
  });

  it('shows wrong rollouts beside correct ones where most groups are all correct (issue 42)', () => {
    // 6 groups of 4: groups 1 and 4 disagree (rollouts 1 and 2 wrong); every other rollout is correct
    const easy = batchFromRows(
      Array.from({ length: 24 }, (_, i) => ({
        group: Math.floor(i / 4),
        completion: [i],
        reward: (Math.floor(i / 4) === 1 || Math.floor(i / 4) === 4) && (i % 4 === 1 || i % 4 === 2) ? 0 : 1,
      })),
    );
    const a = { sequenceAdvantages: new Float64Array(24), weights: new Float32Array(24).fill(1) };
    const recs = sampleRecords(0, easy, a, Array(6).fill('q'), String, 4, 4);
    // before: the first and last of groups 0, 1, 3 and 4 (rollouts 0, 7, 12, 19), every one correct
    expect(recs.map((r) => [r.group, r.correct])).toEqual([
      [1, true],
      [1, false],
      [4, true],
      [4, false],
    ]);
    // more than the disagreeing groups can give: the rest filled from the others, nothing twice
    const many = sampleRecords(0, easy, a, Array(6).fill('q'), String, 4, 8);
    expect(many).toHaveLength(8);
    expect(many.filter((r) => !r.correct)).toHaveLength(2);
    expect(new Set(many.map((r) => r.tokens[0])).size).toBe(8);
  });

  it('never more records than rollouts, none twice', () => {
    const recs = sampleRecords(1, batch, adv, questions, String, 4, 50);
    expect(recs.length).toBeLessThanOrEqual(12);
    expect(new Set(recs.map((r) => r.tokens[0])).size).toBe(recs.length);
  });
});
