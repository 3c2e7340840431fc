import { describe, expect, it } from 'vitest';
import { batchFromRows, batchToRows, takeRollouts, type RolloutRowInput } from './rows.js';
import { bindRolloutStage, checkResamples, replaceGroups, type RolloutStage } from './rollout-stage.js';
import { validateBatch } from './validate.js';

// 3 groups of 2 on short prompts; the replacement: 2 groups of 2 on longer prompts, other lengths, other rewards
const row = (
  group: number,
  prompt: number[],
  completion: number[],
  reward: number,
  extra: Partial<RolloutRowInput> = {},
): RolloutRowInput => ({
  group,
  prompt,
  completion,
  reward,
  behaviorLogprobs: completion.map((t) => -t / 100),
  ...extra,
});
const old = batchFromRows([
  row(0, [1], [10, 11], 0, { reference: [7] }),
  row(0, [1], [12], 0, { reference: [7] }),
  row(1, [2, 2], [20], 1, { spans: { open: [0, 0], content: [0, 1], close: [1, 1] } }),
  row(1, [2, 2], [21, 22, 23], 0),
  row(2, [3], [30], 0, { finish: 'length', reference: [8, 9] }),
  row(2, [3], [], 0, { finish: 'error', reference: [8, 9] }),
]);
const fresh = batchFromRows([
  row(0, [5, 5, 5], [50, 51, 52], 0.25),
  row(0, [5, 5, 5], [53], 0.75),
  row(1, [6, 6, 6, 6], [60], 1),
  row(1, [6, 6, 6, 6], [61, 62], 0.5, { spans: { open: [0, 1], content: [1, 1], close: [1, 2] } }),
]);

describe('replaceGroups', () => {
  it("puts each new group in the old one's place under its id, every column with it, and says where each row came from", () => {
    const { batch, origin } = replaceGroups(old, [2, 0], fresh);
    validateBatch(batch);
    expect(Array.from(origin)).toEqual([-3, -4, 2, 3, -1, -2]);
    const rows = batchToRows(batch);
    const before = batchToRows(old);
    const after = batchToRows(fresh);
    // group 0 gets fresh group 1, group 2 fresh group 0; group 1 untouched; references: fresh rows have none
    expect(rows[0]).toEqual({ ...after[2], group: 0, reference: [] });
    expect(rows[1]).toEqual({ ...after[3], group: 0, reference: [] });
    expect(rows[2]).toEqual({ ...before[2], reference: [] });
    expect(rows[3]).toEqual({ ...before[3], reference: [] });
    expect(rows[4]).toEqual({ ...after[0], group: 2, reference: [] });
    expect(rows[5]).toEqual({ ...after[1], group: 2, reference: [] });
    expect(Array.from(batch.promptOffsets)).toEqual([0, 4, 8, 10, 12, 15, 18]);
    expect(Array.from(batch.completionOffsets)).toEqual([0, 1, 3, 4, 7, 10, 11]);
    expect(Array.from(batch.behaviorLogprobs!)).toEqual(
      Array.from(Float32Array.from([60, 61, 62, 20, 21, 22, 23, 50, 51, 52, 53], (t) => -t / 100)),
    );
  });

  it('keeps the references of untouched rows; replacing nothing copies the batch', () => {
    const { batch } = replaceGroups(old, [1], takeRollouts(fresh, [0, 1]));
    expect(batchToRows(batch).map((r) => r.reference)).toEqual([[7], [7], [], [], [8, 9], [8, 9]]);
    const same = replaceGroups(old, [], takeRollouts(fresh, []));
    expect(batchToRows(same.batch)).toEqual(batchToRows(old));
    expect(Array.from(same.origin)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('keeps non-contiguous groups where their first row was', () => {
    const mixed = batchFromRows([row(0, [1], [1], 0), row(1, [2], [2], 0), row(0, [1], [3], 0)]);
    const one = batchFromRows([row(0, [9], [9], 1)]);
    const { batch, origin } = replaceGroups(mixed, [0], one);
    expect(Array.from(origin)).toEqual([-1, 1]);
    expect(Array.from(batch.groupIndex)).toEqual([0, 1]);
  });

  it('refuses a group named twice or not in the batch, a missing replacement, and mixed log-probs', () => {
    expect(() => replaceGroups(old, [1, 1], fresh)).toThrow('group 1 is replaced twice');
    expect(() => replaceGroups(old, [1, 7], fresh)).toThrow('group 7 is not in the batch');
    expect(() => replaceGroups(old, [1, 2, 0], fresh)).toThrow('no replacement rollouts for group 0');
    expect(() => replaceGroups(old, [1], fresh)).toThrow('replacement rollout 2 is in group 1, but 1 groups are replaced');
    const noLogprobs = { ...fresh };
    delete noLogprobs.behaviorLogprobs;
    expect(() => replaceGroups(old, [0, 1], noLogprobs)).toThrow(/replacement rollouts lack behaviour log-probs and the batch has them/);
  });
});

describe('checkResamples', () => {
  it('refuses a group twice in one step, naming the method and the group; an unknown group; an empty question', () => {
    expect(() =>
      checkResamples(
        [
          { group: 1, question: 'a' },
          { group: 1, question: 'b' },
        ],
        3,
        'scope-rl',
      ),
    ).toThrow('item 1, field group: method scope-rl asked to re-sample group 1 twice in one step');
    expect(() => checkResamples([{ group: 3, question: 'a' }], 3, 'm')).toThrow(
      'method m asked to re-sample group 3, but the step has groups 0..2',
    );
    expect(() => checkResamples([{ group: 0, question: ' ' }], 3, 'm')).toThrow('method m asked to re-sample group 0 without a question');
    expect(() =>
      checkResamples(
        [
          { group: 0, question: 'a' },
          { group: 2, question: 'b' },
        ],
        3,
        'm',
      ),
    ).not.toThrow();
  });

  it('bindRolloutStage gives the options to both calls', async () => {
    const stage: RolloutStage<{ tau: number }> = {
      route: (groups, c) => groups.filter((g) => g.rewards[0]! < c.tau).map((g) => ({ group: g.group, question: 'again' })),
      grade: (text, _g, _r, c) => (text.length > c.tau ? 1 : 0),
    };
    const bound = bindRolloutStage('m', stage, { tau: 0.5 });
    const group = {
      group: 0,
      question: 'q',
      answer: '1',
      aux: undefined,
      source: undefined,
      rewards: new Float32Array([0]),
      texts: ['x'],
      lengths: Int32Array.of(1),
    };
    expect(await bound.route([group])).toEqual([{ group: 0, question: 'again' }]);
    expect(await bound.grade('xy', group, { group: 0, question: 'again' })).toBe(1);
    expect(bound.method).toBe('m');
  });
});
