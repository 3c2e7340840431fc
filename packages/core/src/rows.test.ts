import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { batchFromRows, batchToRows, takeRollouts, type RolloutRowInput } from './rows.js';
import { getSpans, totalTokens, completionLength, numGroups, hasAnswer, FINISH_CODES } from './batch.js';
import { CoreError } from './errors.js';

const rows: RolloutRowInput[] = [
  {
    group: 0,
    prompt: [1, 2],
    completion: [5, 6, 7, 8],
    reward: 1,
    spans: { open: [0, 1], content: [1, 3], close: [3, 4] },
    behaviorLogprobs: [-0.1, -0.2, -0.3, -0.4],
  },
  { group: 0, prompt: [1, 2], completion: [9], reward: 0, finish: 'length', behaviorLogprobs: [-1] },
  { group: 1, prompt: [3], completion: [], reward: 0.5, finish: 'error', behaviorLogprobs: [] },
];

describe('batchFromRows', () => {
  it('lays rows out in columns with offsets, codes and spans', () => {
    const b = batchFromRows(rows);
    expect(b.numRollouts).toBe(3);
    expect(Array.from(b.completionTokens)).toEqual([5, 6, 7, 8, 9]);
    expect(Array.from(b.completionOffsets)).toEqual([0, 4, 5, 5]);
    expect(Array.from(b.promptTokens)).toEqual([1, 2, 1, 2, 3]);
    expect(Array.from(b.promptOffsets)).toEqual([0, 2, 4, 5]);
    expect(Array.from(b.groupIndex)).toEqual([0, 0, 1]);
    expect(Array.from(b.rewards)).toEqual([1, 0, 0.5]);
    expect(Array.from(b.finish)).toEqual([FINISH_CODES.stop, FINISH_CODES.length, FINISH_CODES.error]);
    expect(Array.from(b.spans)).toEqual([0, 1, 1, 3, 3, 4, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1]);
    expect(Array.from(b.behaviorLogprobs!)).toEqual(Array.from(new Float32Array([-0.1, -0.2, -0.3, -0.4, -1])));
    expect(totalTokens(b)).toBe(5);
    expect(completionLength(b, 0)).toBe(4);
    expect(numGroups(b)).toBe(2);
    expect(getSpans(b, 0)).toEqual({ open: [0, 1], content: [1, 3], close: [3, 4] });
    expect(hasAnswer(b, 1)).toBe(false);
  });

  it('round-trips through rows', () => {
    const row = fc.record({
      group: fc.nat(5),
      prompt: fc.array(fc.nat(1000), { maxLength: 5 }),
      completion: fc.array(fc.nat(1000), { minLength: 3, maxLength: 12 }),
      reward: fc.float({ noNaN: true, noDefaultInfinity: true, min: -10, max: 10 }),
      finish: fc.constantFrom('stop' as const, 'length' as const, 'error' as const),
      withSpan: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), (rs) => {
        const input: RolloutRowInput[] = rs.map(({ withSpan, ...r }) => ({
          ...r,
          reward: Math.fround(r.reward),
          spans: withSpan ? { open: [0, 1], content: [1, 2], close: [2, 3] } : null,
        }));
        const back = batchToRows(batchFromRows(input));
        expect(back).toEqual(input.map((r) => ({ ...r })));
      }),
      { numRuns: 200 },
    );
  });

  it('names the rollout and field of a bad row', () => {
    const bad = [rows[0]!, { group: 0, completion: [1, -2], reward: 1 }];
    expect(() => batchFromRows(bad)).toThrow(/rollout 1, field completion\.1: .*>=0/);
    try {
      batchFromRows(bad);
    } catch (e) {
      expect(e).toBeInstanceOf(CoreError);
      expect((e as CoreError).code).toBe('invalid_row');
      expect((e as CoreError).location).toEqual({ rollout: 1, field: 'completion.1' });
    }
    expect(() => batchFromRows([{ group: 0, completion: [1], reward: Number.NaN }])).toThrow(/rollout 0, field reward/);
    expect(() => batchFromRows([{ group: 0, completion: [1], reward: 0, extra: 1 } as never])).toThrow(/unknown key: extra/);
    expect(() =>
      batchFromRows([{ group: 0, completion: [1, 2], reward: 0, spans: { open: [0, 1], content: [1, 2], close: [2, 3] } }]),
    ).toThrow(/rollout 0, field spans: close span ends at 3 but the completion has 2 tokens/);
    expect(() =>
      batchFromRows([{ group: 0, completion: [1, 2], reward: 0, spans: { open: [0, 2], content: [1, 2], close: [2, 2] } }]),
    ).toThrow(/ordered/);
    expect(() =>
      batchFromRows([
        { group: 0, completion: [1], reward: 0, behaviorLogprobs: [-1] },
        { group: 0, completion: [1], reward: 0 },
      ]),
    ).toThrow(/rollout 1, field behaviorLogprobs: .*every row or on none/);
    expect(() => batchFromRows([{ group: 0, completion: [1, 2], reward: 0, behaviorLogprobs: [-1] }])).toThrow(/expected 2 log-probs/);
  });
});

describe('takeRollouts', () => {
  const rows: RolloutRowInput[] = [
    {
      group: 0,
      prompt: [1, 2],
      completion: [3, 4, 5],
      reward: 1,
      behaviorLogprobs: [-1, -2, -3],
      spans: { open: [0, 1], content: [1, 2], close: [2, 3] },
    },
    { group: 0, prompt: [1, 2], completion: [6], reward: 0, finish: 'length', behaviorLogprobs: [-4] },
    { group: 1, prompt: [7], completion: [8, 9], reward: 0.5, behaviorLogprobs: [-5, -6] },
  ];

  it('is the batch of the chosen rows, in the given order', () => {
    const picked = takeRollouts(batchFromRows(rows), [2, 0]);
    expect(batchToRows(picked)).toEqual(batchToRows(batchFromRows([rows[2]!, rows[0]!])));
    expect(takeRollouts(batchFromRows(rows), []).numRollouts).toBe(0);
  });

  it('refuses a rollout the batch does not have, naming it', () => {
    expect(() => takeRollouts(batchFromRows(rows), [0, 3])).toThrow(/no rollout 3 in a batch of 3/);
  });
});
