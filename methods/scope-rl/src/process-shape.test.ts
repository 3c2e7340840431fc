import { describe, expect, it } from 'vitest';
import { prepareEstimator } from '@rlvr/advantages';
import { processShape, qprRewards, scopeRlEstimator } from './index.js';

const o = { usefulWeight: 0.2, lowValuePenalty: 0.2, lengthPenalty: 0.02 };

describe('stage 2: the process-shape term', () => {
  it('shapes a correct completion: useful share up, low-value share and log-length down', () => {
    expect(processShape(['useful', 'useful', 'answer'], 0, o)).toBeCloseTo(0.2, 12);
    expect(processShape(['useful', 'filler', 'answer'], 0, o)).toBeCloseTo(0, 12);
    expect(processShape(['answer'], Math.E - 1, o)).toBeCloseTo(-0.02, 12);
  });

  it('adds the term to correct trajectories only (reward 1), and only with qpr', () => {
    const group = {
      rewards: Float32Array.of(1, 0, 0.5, 1),
      texts: ['3 + 4 = 7\n\\boxed{7}', '\\boxed{1}', 'x', 'Hmm.\n\\boxed{7}'],
      lengths: Int32Array.of(0, 3, 3, 0),
    };
    expect(Array.from(qprRewards(group, o))).toEqual([1.2000000476837158, 0, 0.5, 0.800000011920929]);
    const stage = prepareEstimator(scopeRlEstimator, {}).rolloutStage!;
    const scored = { group: 0, question: 'q', answer: '7', aux: undefined, source: undefined, ...group };
    expect(stage.regrade!(scored)).toBeUndefined();
    expect(Array.from(prepareEstimator(scopeRlEstimator, { qpr: true }).rolloutStage!.regrade!(scored)!)).toEqual(
      Array.from(qprRewards(group, o)),
    );
  });
});
