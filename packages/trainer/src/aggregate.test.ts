import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '@rlvr/policy';
import { aggregate, aggregationScale, type AggregationMode } from './aggregate.js';

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

// two rollouts, padded to T = 4: lengths 3 and 1
const values = [
  [1, 2, 3, 99],
  [10, 99, 99, 99],
];
const mask = [
  [1, 1, 1, 0],
  [1, 0, 0, 0],
];

function agg(mode: AggregationMode, v = values, m = mask, scale = aggregationScale([3, 1], 4)): number {
  return aggregate(tf.tensor2d(v), tf.tensor2d(m), mode, scale).dataSync()[0]!;
}

describe('aggregate', () => {
  it('follows each mode formula', () => {
    expect(agg('token-mean')).toBeCloseTo(16 / 4, 6); // (1+2+3+10) / 4 tokens
    expect(agg('seq-mean-token-mean')).toBeCloseTo((2 + 10) / 2, 6); // mean of per-rollout means
    expect(agg('seq-mean-token-sum')).toBeCloseTo((6 + 10) / 2, 6);
    expect(agg('constant')).toBeCloseTo(16 / (2 * 4), 6); // Dr. GRPO: B * max length
    expect(agg('constant', values, mask, aggregationScale([3, 1], 4, 100))).toBeCloseTo(0.16, 6);
  });

  it('micro-batches with the global scale add up to the full batch, for every mode', () => {
    const scale = aggregationScale([3, 1], 4);
    for (const mode of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'constant'] as const) {
      const full = agg(mode, values, mask, scale);
      const parts = agg(mode, [values[0]!], [mask[0]!], scale) + agg(mode, [values[1]!], [mask[1]!], scale);
      expect(parts).toBeCloseTo(full, 6);
    }
  });

  it('counts only sequences with valid tokens', () => {
    expect(aggregationScale([3, 0, 2], 5)).toEqual({ tokens: 5, sequences: 2, constant: 15 });
  });
});
