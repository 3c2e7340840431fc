import fc from 'fast-check';
import { type Signals, SIGNAL_NAMES, type AnswerSpans, type RolloutBatch } from '@rlvr/core';
import { interopBatch, type InteropRow } from '../interop.js';

/** A rollout as tests describe it. */
export interface TestRollout {
  group: number;
  reward: number;
  length: number;
  spans?: AnswerSpans | null;
  /** raw score per token; defaults to 1 */
  scores?: number[];
}

/** Batch + Signals where both saliency signals carry `scores`. */
export function makeBatch(rollouts: readonly TestRollout[]): { batch: RolloutBatch; signals: Signals } {
  const rows: InteropRow[] = rollouts.map((r) => ({
    group: r.group,
    reward: r.reward,
    length: r.length,
    spans: r.spans ?? null,
    saliency: r.scores ?? new Array<number>(r.length).fill(1),
  }));
  const { batch, signals } = interopBatch(rows, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.noisyKl]);
  // interopBatch numbers groups by first appearance; tests want the given ids
  rollouts.forEach((r, i) => (batch.groupIndex[i] = r.group));
  return { batch, signals };
}

/** Per-rollout slices of a per-token array. */
export function slices(batch: RolloutBatch, values: Float32Array): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < batch.numRollouts; i++)
    out.push(Array.from(values.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!)));
  return out;
}

const spansFor = (length: number): fc.Arbitrary<AnswerSpans | null> => {
  if (length < 2) return fc.constant(null);
  return fc.option(
    fc.tuple(fc.nat(length - 2), fc.nat(3), fc.nat(length)).map(([o0, contentLen, post]) => {
      const o1 = o0 + 1;
      const c1 = Math.min(o1 + contentLen, length - 1);
      const k1 = c1 + 1;
      void post;
      return { open: [o0, o1], content: [o1, c1], close: [c1, k1] } as AnswerSpans;
    }),
    { freq: 4 },
  );
};

const rollout = (group: number, rewards: fc.Arbitrary<number>): fc.Arbitrary<TestRollout> =>
  fc.integer({ min: 0, max: 24 }).chain((length) =>
    fc.record({
      group: fc.constant(group),
      reward: rewards,
      length: fc.constant(length),
      spans: spansFor(length),
      scores: fc
        .array(fc.oneof(fc.constant(0), fc.double({ min: 1e-6, max: 100, noNaN: true })), { minLength: length, maxLength: length })
        .map((a) => a.map(Math.fround)),
    }),
  );

/** Rewards as RLVR produces them: mostly 0/1, sometimes graded. */
const rewardArb = fc.oneof(fc.constantFrom(0, 1), fc.double({ min: -2, max: 2, noNaN: true }).map(Math.fround));

/** A random batch of 1-5 consecutive groups of 1-6 rollouts each. */
export const batchArb: fc.Arbitrary<TestRollout[]> = fc
  .array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 5 })
  .chain((sizes) => fc.tuple(...sizes.map((size, g) => fc.array(rollout(g, rewardArb), { minLength: size, maxLength: size }))))
  .map((groups) => groups.flat());
