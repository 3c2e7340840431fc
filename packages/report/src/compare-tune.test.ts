import { describe, expect, test } from 'vitest';
import {
  TuneRecordSchema,
  formatTune,
  nextRate,
  rateLabel,
  tuneFlag,
  tuneRates,
  tuneRecord,
  tuneRow,
  tuneSeedsFlag,
} from './compare-tune.js';
import type { TuneRow } from './compare-tune.js';

const message = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return `${(err as { location?: { field?: string } }).location?.field ?? ''}|${(err as Error).message}`;
  }
  throw new Error('no error');
};

describe('tuneFlag', () => {
  test('a list, sorted; a log range A..BxN rounded to three digits', () => {
    expect(tuneFlag('lr=1e-5,3e-5,1e-4')).toEqual({ key: 'lr', grid: [1e-5, 3e-5, 1e-4] });
    expect(tuneFlag('lr=1e-4, 1e-5')).toEqual({ key: 'lr', grid: [1e-5, 1e-4] });
    expect(tuneFlag('lr=1e-5..1e-3x3').grid).toEqual([1e-5, 1e-4, 1e-3]);
    expect(tuneFlag('lr=1e-5..1e-3x5').grid).toEqual([1e-5, 3.16e-5, 1e-4, 3.16e-4, 1e-3]);
    expect(tuneFlag('lr=0.00001..0.0001x2').grid).toEqual([1e-5, 1e-4]);
  });

  test.each([
    ['1e-5,1e-4', 'must be KEY=GRID'],
    ['beta=0.1,0.2', 'only lr (trainer.schedule.lr) is tunable for now, not "beta"'],
    ['lr=1e-5,0', 'a rate must be a positive number, not "0"'],
    ['lr=-1e-5,1e-4', 'a rate must be a positive number, not "-1e-5"'],
    ['lr=1e-5,abc', 'a rate must be a positive number, not "abc"'],
    ['lr=1e-5,,1e-4', 'must be comma-separated rates'],
    ['lr=1e-4,1e-5,1e-4', 'lists the rate 0.0001 twice'],
    ['lr=1e-4', 'needs at least two rates'],
    ['lr=1e-3..1e-5x3', 'a range A..BxN needs A < B'],
    ['lr=1e-5..1e-3x1', 'needs N from 2 to 20 rates'],
    ['lr=1e-5..1e-3', 'a range is A..BxN'],
  ])('%s: one usage error on --tune', (v, m) => {
    const got = message(() => tuneFlag(v));
    expect(got).toContain(m);
    expect(got).toContain(`(got ${JSON.stringify(v)})`);
    expect(got.startsWith('--tune|')).toBe(true);
  });
});

describe('tuneSeedsFlag', () => {
  test('default two seeds from 1000; N counts up from 1000; a list is taken as it is', () => {
    expect(tuneSeedsFlag(undefined, [0, 1, 2])).toEqual([1000, 1001]);
    expect(tuneSeedsFlag('3', [0, 1, 2])).toEqual([1000, 1001, 1002]);
    expect(tuneSeedsFlag('7,8', [0, 1, 2])).toEqual([7, 8]);
  });
  test('a tuning seed that is a comparison seed is refused, naming it', () => {
    expect(message(() => tuneSeedsFlag('2,5', [0, 1, 2]))).toMatch(
      /tuning seed 2 is also comparison seed: tuning and comparison seeds must differ$/,
    );
    expect(message(() => tuneSeedsFlag('2', [1000, 1001]))).toContain('tuning seeds 1000, 1001 are also comparison seeds');
    expect(message(() => tuneSeedsFlag('x', []))).toMatch(/^--tune-seeds\|/);
  });
});

describe('tuneRow and nextRate', () => {
  const acc = (table: Record<number, number[]>) => (lr: number) => table[lr]!;

  test('the best mean over seeds; mean and sample SD per rate', () => {
    const r = tuneRow('grpo', [1e-4, 1e-5, 3e-5], [], acc({ 1e-5: [0.5, 0.6], 3e-5: [0.7, 0.6], 1e-4: [0.4, 0.5] }), [1, 2]);
    expect(r.grid).toEqual([1e-5, 3e-5, 1e-4]);
    expect(r.chosen).toBe(3e-5);
    expect(r.edge).toBeNull();
    expect(r.points[1]!.mean).toBeCloseTo(0.65, 12);
    expect(r.points[1]!.sd).toBeCloseTo(Math.SQRT1_2 * 0.1, 12);
    expect(nextRate(r, 3)).toBeNull();
  });

  test('a tie goes to the lower rate; one seed has no SD', () => {
    const r = tuneRow('grpo', [1e-5, 3e-5, 1e-4], [], acc({ 1e-5: [0.5], 3e-5: [0.6], 1e-4: [0.6] }), [1]);
    expect(r.chosen).toBe(3e-5);
    expect(r.points.map((p) => p.sd)).toEqual([null, null, null]);
  });

  test('an edge choice widens by the ratio of the two rates at that edge, until the cap', () => {
    const high = tuneRow('g', [1e-5, 3e-5, 1e-4], [], acc({ 1e-5: [0.1], 3e-5: [0.2], 1e-4: [0.3] }), [1]);
    expect(high.edge).toBe('high');
    expect(nextRate(high, 3)).toBe(3.33e-4);
    const low = tuneRow('g', [1e-5, 3e-5, 1e-4], [], acc({ 1e-5: [0.3], 3e-5: [0.2], 1e-4: [0.1] }), [1]);
    expect(low.edge).toBe('low');
    expect(nextRate(low, 3)).toBe(3.33e-6);
    expect(nextRate({ ...low, widened: [1, 2, 3] }, 3)).toBeNull();
    expect(nextRate(low, 0)).toBeNull();
    // a ratio within rounding of 1: the exact rate, never one of the grid again
    const close = tuneRow('g', [1e-5, 1.0001e-5], [], acc({ 1e-5: [0.3], 1.0001e-5: [0.2] }), [1]);
    expect(nextRate(close, 3)).toBeCloseTo(1e-5 / 1.0001, 15);
    expect(nextRate(close, 3)).not.toBe(1e-5);
  });
});

describe('tuneRates', () => {
  // validation accuracy peaks at lr 3e-4 (in log): above the initial grid, so the grid must widen upwards twice
  const peak = (lr: number, at: number) => 0.6 - 0.05 * Math.log10(lr / at) ** 2;

  test('widens each row at its edge until its best is inside; trains only the rates it adds', async () => {
    const trained: string[] = [];
    const lines: string[] = [];
    const rows = await tuneRates(
      ['a', 'b'],
      { grid: [1e-5, 3e-5, 1e-4], seeds: [7, 8], maxWiden: 5 },
      async (points) => {
        trained.push(points.map((p) => `${p.estimator}@${rateLabel(p.lr)}`).join(' '));
        return false;
      },
      (e, lr) => [peak(lr, e === 'a' ? 3e-4 : 3e-5), peak(lr, e === 'a' ? 3e-4 : 3e-5) - 0.01],
      (l) => lines.push(l),
    );
    expect(trained).toEqual(['a@1e-5 b@1e-5 a@3e-5 b@3e-5 a@1e-4 b@1e-4', 'a@3.33e-4', 'a@1.11e-3']);
    expect(rows!.map((r) => [r.estimator, r.chosen, r.edge, r.widened, r.grid])).toEqual([
      ['a', 3.33e-4, null, [3.33e-4, 1.11e-3], [1e-5, 3e-5, 1e-4, 3.33e-4, 1.11e-3]],
      ['b', 3e-5, null, [], [1e-5, 3e-5, 1e-4]],
    ]);
    expect(lines).toEqual([
      'tune: a: best lr 1e-4 is at the high edge of its grid: adding lr 3.33e-4',
      'tune: a: best lr 3.33e-4 is at the high edge of its grid: adding lr 1.11e-3',
      'tune: chosen a lr 3.33e-4, b lr 3e-5',
    ]);
  });

  test('the cap: a choice still at an edge is said so, in the lines, the record and the table', async () => {
    const lines: string[] = [];
    const rows = (await tuneRates(
      ['a'],
      { grid: [1e-5, 1e-4], seeds: [7], maxWiden: 1 },
      async () => false,
      (_e, lr) => [peak(lr, 1e-2)],
      (l) => lines.push(l),
    ))!;
    expect(rows[0]).toMatchObject({ chosen: 1e-3, edge: 'high', widened: [1e-3] });
    expect(lines).toContain(
      'tune: a: chosen lr 1e-3 is at the high edge of its grid after 1 widening(s) (--tune-max-widen 1): its best rate may lie beyond',
    );
    const record = tuneRecord({ grid: [1e-5, 1e-4], seeds: [7], maxWiden: 1 }, { problems: 64, definition: 'some split' }, rows);
    expect(TuneRecordSchema.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
    const text = formatTune(record);
    expect(text).toContain('1e-3 (high edge)');
    expect(text).toContain('a: chosen lr 1e-3 is at the high edge');
  });

  test('stopped: null, nothing more trained', async () => {
    let calls = 0;
    const rows = await tuneRates(
      ['a'],
      { grid: [1e-5, 1e-4], seeds: [7], maxWiden: 3 },
      async () => ++calls > 0,
      () => [0.5],
      () => {},
    );
    expect(rows).toBeNull();
    expect(calls).toBe(1);
  });
});

describe('formatTune', () => {
  test('one column per rate any row ran, mean ± SD in points, * on the choice, - where a row did not run a rate', () => {
    const row = (estimator: string, grid: number[], means: number[][], chosen: number): TuneRow => {
      const r = tuneRow(estimator, grid, grid.length > 2 ? [grid.at(-1)!] : [], (lr) => means[grid.indexOf(lr)]!, [1, 2]);
      expect(r.chosen).toBe(chosen);
      return r;
    };
    const rows = [
      row(
        'grpo',
        [1e-5, 1e-4],
        [
          [0.5, 0.52],
          [0.4, 0.4],
        ],
        1e-5,
      ),
      row(
        'grail',
        [1e-5, 1e-4, 1e-3],
        [
          [0.4, 0.4],
          [0.6, 0.62],
          [0.5, 0.5],
        ],
        1e-4,
      ),
    ];
    const t = formatTune(tuneRecord({ grid: [1e-5, 1e-4], seeds: [1, 2], maxWiden: 0 }, { problems: 32, definition: 'split' }, rows));
    const lines = t.split('\n');
    expect(lines[0]).toBe(
      'learning rates (trainer.schedule.lr) tuned on 2 tuning seed(s) (1, 2) on a validation split of 32 problems: split',
    );
    expect(lines[2]).toMatch(/^estimator +lr 1e-5 +lr 1e-4 +lr 1e-3 +chosen$/);
    expect(lines[4]).toMatch(/^grpo +51\.0% ± 1\.4\* +40\.0% ± 0\.0 +- +1e-5 \(low edge\)$/);
    expect(lines[5]).toMatch(/^grail +40\.0% ± 0\.0 +61\.0% ± 1\.4\* +50\.0% ± 0\.0 +1e-4$/);
  });
});
