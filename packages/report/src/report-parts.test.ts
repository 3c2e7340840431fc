import { describe, expect, test } from 'vitest';
import { accuracyErrorBars, rewardTrend, rewardWindow } from './report-parts.js';

describe('summary numbers', () => {
  test('reward windows: a tenth of the logged steps, 1 to 20', () => {
    expect([1, 9, 10, 59, 60, 200, 1000].map(rewardWindow)).toEqual([1, 1, 1, 5, 6, 20, 20]);
  });

  test('reward trend: means over the first and last windows; one step as it is', () => {
    const rec = (step: number, v: number) => ({ step, 'reward/mean': v });
    expect(rewardTrend([rec(1, 0.5)])).toBe('0.5 at step 1');
    expect(rewardTrend([rec(1, 0.25), rec(2, 0.75)])).toBe('0.25 at step 1 -> 0.75 at step 2; best step 0.75 at step 2');
    const rs = Array.from({ length: 20 }, (_, i) => rec(i + 1, i % 2 === 0 ? 0 : 1));
    // windows of 2: steps 1-2 (0, 1) and 19-20 (0, 1)
    expect(rewardTrend(rs)).toBe(
      '0.5 over steps 1–2 -> 0.5 over steps 19–20 (means over the first and last 2 logged steps); best step 1 at step 2',
    );
    expect(rewardTrend([{ step: 1 }])).toBeNull();
  });

  test('error bars: ±1 s.e. = SD over problems (n - 1) / √problems, against hand values', () => {
    // per-problem accuracies 0, 0.5, 1, 0.5: mean 0.5, SD sqrt(0.5 / 3), s.e. SD / 2
    const se = Math.sqrt(0.5 / 3) / 2;
    const [a, g] = accuracyErrorBars([
      { step: 3, accuracy: 0.5, passAtN: 0.75, n: 2, problems: 4, correct: [0, 1, 2, 1], greedyCorrect: [1, 1, 1, 1] },
    ]);
    expect(a!.series).toBe('accuracy');
    expect(a!.lo).toBeCloseTo(0.5 - se, 12);
    expect(a!.hi).toBeCloseTo(0.5 + se, 12);
    expect(g).toEqual({ step: 3, series: 'accuracy/greedy', lo: 1, hi: 1 });
  });
});
