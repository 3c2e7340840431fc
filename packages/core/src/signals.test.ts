import { describe, expect, it } from 'vitest';
import { batchFromRows } from './rows.js';
import { Signals } from './signals.js';

const batch = batchFromRows([
  { group: 0, reward: 1, prompt: [1], completion: [2, 3] },
  { group: 0, reward: 0, prompt: [1], completion: [4] },
  { group: 1, reward: 0, prompt: [1], completion: [5, 6, 7] },
]);

describe('per-rollout signals', () => {
  it('hold [B] scalars or [B, k] vectors beside the per-token ones', () => {
    const s = Signals.forBatch(batch);
    expect([s.totalTokens, s.numRollouts]).toEqual([6, 3]);
    s.set('policy.entropy', new Float32Array(6));
    s.setPerRollout('gar.cosine', Float32Array.from([0.5, -1, 0]));
    s.setPerRollout('example.vec', Float32Array.from([1, 2, 3, 4, 5, 6]), 2);
    expect(s.names()).toEqual(['policy.entropy', 'gar.cosine', 'example.vec']);
    expect(s.getPerRollout('example.vec')).toEqual({ values: Float32Array.from([1, 2, 3, 4, 5, 6]), width: 2 });
    expect([s.shapeOf('policy.entropy'), s.shapeOf('gar.cosine'), s.shapeOf('nope')]).toEqual(['token', 'rollout', undefined]);
    expect(s.has('gar.cosine')).toBe(true);
    const c = s.clone();
    expect(c.getPerRollout('gar.cosine').values).toBe(s.getPerRollout('gar.cosine').values);
    expect(c.get('policy.entropy')).toBe(s.get('policy.entropy'));
  });

  it('are checked on the way in: shape, type, finite values (naming signal and rollout)', () => {
    const s = Signals.forBatch(batch);
    expect(() => s.setPerRollout('r', new Float32Array(4))).toThrow('signal r has 4 values, expected 3 (shape [3]: per rollout)');
    expect(() => s.setPerRollout('r', new Float32Array(5), 2)).toThrow('signal r has 5 values, expected 6 (shape [3, 2]: per rollout)');
    expect(() => s.setPerRollout('r', new Float32Array(3), 0)).toThrow('signal r must have a positive integer width, got 0');
    expect(() => s.setPerRollout('r', [1, 2, 3] as never)).toThrow('signal r must be a Float32Array');
    expect(() => s.setPerRollout('r', Float32Array.from([0, Number.NaN, 0]))).toThrow(
      'rollout 1, field r: signal r holds NaN: per-rollout values must be finite',
    );
    expect(() => s.setPerRollout('r', Float32Array.from([0, 0, 0, 0, 0, Number.POSITIVE_INFINITY]), 2)).toThrow(
      'rollout 2, field r: signal r holds Infinity (component 1): per-rollout values must be finite',
    );
    expect(() => new Signals(6).setPerRollout('r', new Float32Array(3))).toThrow(/do not know the number of rollouts/);
  });

  it('a signal read in the other shape, or missing, is an error naming who needed it', () => {
    const s = Signals.forBatch(batch).setPerRollout('gar.cosine', new Float32Array(3)).set('policy.entropy', new Float32Array(6));
    expect(() => s.get('gar.cosine', 'estimator gar')).toThrow('estimator gar reads signal gar.cosine per token, but it is per-rollout');
    expect(() => s.getPerRollout('policy.entropy', 'estimator x')).toThrow(
      'estimator x reads signal policy.entropy per rollout, but it is per-token',
    );
    expect(() => s.getPerRollout('nope', 'estimator x')).toThrow('estimator x needs signal nope; available: policy.entropy, gar.cosine');
  });
});
