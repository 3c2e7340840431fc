import { describe, expect, test } from 'vitest';
import { formatLearning, learningCheck } from './learning.js';
import type { EvalRecord } from './run-dir.js';

const ev = (step: number, correct: number[], n = 4): EvalRecord => ({
  step,
  accuracy: correct.reduce((a, c) => a + c / n, 0) / correct.length,
  passAtN: correct.filter((c) => c > 0).length / correct.length,
  n,
  problems: correct.length,
  correct,
});

describe('learningCheck', () => {
  test('gain in paired s.e., the worst fall after the midpoint, the share of the pass@n gap closed (by hand)', () => {
    const c = learningCheck([ev(0, [0, 0, 0, 1]), ev(4, [1, 1, 2, 2]), ev(6, [4, 4, 2, 2]), ev(8, [2, 4, 1, 2])]);
    expect(c).not.toBeNull();
    // last - first: 0.5, 1, 0.25, 0.25: mean 0.5, sample sd sqrt(0.375 / 3), s.e. sd / 2
    expect(c!.gain.mean).toBeCloseTo(0.5, 14);
    expect(c!.gainSe).toBeCloseTo(0.5 / (Math.sqrt(0.375 / 3) / 2), 12);
    expect(c!.midpoint).toBe(4);
    // step 6 rose from step 4; step 8 fell from step 6: -0.5, 0, -0.25, 0 (mean -0.1875, sample variance 0.171875 / 3)
    expect(c!.worstFall?.step).toBe(8);
    expect(c!.worstFall?.previousStep).toBe(6);
    expect(c!.worstFall?.change.mean).toBeCloseTo(-0.1875, 14);
    expect(c!.worstFall?.se).toBeCloseTo(-0.1875 / Math.sqrt(0.171875 / 3 / 4), 12);
    // first: accuracy 1/16, pass@4 1/4; last accuracy 9/16: (9/16 - 1/16) / (4/16 - 1/16)
    expect(c!.gapClosed).toBeCloseTo(8 / 3, 14);
    expect(formatLearning(c!, 4)).toBe(
      '+50.0 points = 2.8 paired s.e.; worst fall after step 4: -18.8 points (-1.6 s.e.) from step 6 to 8; 267% of the gap to pass@4 closed',
    );
  });

  test('a fall at or before the midpoint does not count; the step-0 evaluation is not one to fall from', () => {
    const c = learningCheck([ev(0, [2, 2, 2, 2]), ev(5, [0, 0, 1, 0]), ev(10, [3, 3, 3, 4])]);
    expect(c!.worstFall).toBeNull();
    expect(formatLearning(c!, 4)).toBe(
      // gain 0.25, 0.25, 0.25, 0.5: mean 0.3125, s.e. sqrt(0.046875 / 3) / 2; gap at step 0: pass@4 1 - accuracy 1/2
      `+31.3 points = ${(0.3125 / (Math.sqrt(0.046875 / 3) / 2)).toFixed(1)} paired s.e.; no evaluation after step 5 fell below the one before it; 63% of the gap to pass@4 closed`,
    );
  });

  test('nothing to pair: one evaluation, or evaluations of other problems or another n', () => {
    expect(learningCheck([ev(0, [1, 2])])).toBeNull();
    expect(learningCheck([ev(0, [1, 2]), ev(4, [1, 2, 3])])).toBeNull();
    expect(learningCheck([ev(0, [1, 2]), ev(4, [1, 2], 8)])).toBeNull();
    expect(learningCheck([])).toBeNull();
  });

  test('no gap to close (pass@n equals the mean): no share, said by leaving it out', () => {
    const c = learningCheck([ev(0, [4, 0]), ev(2, [4, 0])]);
    expect(c!.gapClosed).toBeNaN();
    expect(formatLearning(c!, 4)).toBe('+0.0 points (no s.e.); no evaluation after step 1 fell below the one before it');
  });
});
