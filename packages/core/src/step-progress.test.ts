import { describe, expect, test, vi } from 'vitest';
import { duration, median, progressLine, stepLogger, stopwatch } from './step-progress.js';

describe('progressLine', () => {
  test('bar, steps, reward, accuracy, rate and time left', () => {
    expect(progressLine({ step: 30, steps: 120, reward: 0.4125, accuracy: 0.6171875, secondsPerStep: 2 }, 12)).toBe(
      '[###.........]  30/120  reward 0.41  acc 61.7%  2.0 s/step  eta 3m00s',
    );
    expect(progressLine({ step: 0, steps: 5, reward: Number.NaN, accuracy: Number.NaN, secondsPerStep: Number.NaN }, 4)).toBe(
      '[....] 0/5  reward   -   acc -  - s/step  eta -',
    );
    expect([duration(59.4), duration(95), duration(3700)]).toEqual(['59s', '1m35s', '1h01m']);
  });

  test('stepLogger: lines and warnings prefixed, a step logged every fifth step and at the last when not live', () => {
    let text = '';
    const log = stepLogger('rlvr train', false, { write: (s: string) => (text += s) }, false, (p) => `step ${p.step}`);
    log.info('hello');
    log.warn('careful');
    for (const step of [1, 5, 7]) log.progress({ step, steps: 7, reward: 0, accuracy: 0, secondsPerStep: 1 });
    expect(text).toBe('rlvr train: hello\nrlvr train: warning: careful\nrlvr train: step 5\nrlvr train: step 7\n');
  });

  test('median: the middle value, the mean of the two middle ones, NaN for none', () => {
    expect([median([3, 1, 2]), median([4, 1, 3, 2]), median([])]).toEqual([2, 2.5, Number.NaN]);
  });
});

describe('stopwatch', () => {
  test('each lap is the seconds since the previous lap', () => {
    const now = vi.spyOn(performance, 'now');
    try {
      for (const ms of [1000, 1250, 4250, 4250]) now.mockReturnValueOnce(ms);
      const lap = stopwatch();
      expect([lap(), lap(), lap()]).toEqual([0.25, 3, 0]);
    } finally {
      now.mockRestore();
    }
  });
});
