import { describe, expect, test } from 'vitest';
import { textTable } from '@rlvr/core';
import { formatCompare, formatMeanStd, formatVerdict } from './compare-format.js';
import { meanStd, noiseVerdict, stepsToThreshold, summarize, thresholdFor } from './compare-stats.js';
import type { CompareEval, CompareRun } from './compare-stats.js';

/** Evals at steps 0, 10, 20 with the given accuracies (pass@n given for the last). */
const evals = (acc: [number, number, number], finalPass: number): CompareEval[] =>
  acc.map((accuracy, i) => ({ step: 10 * i, accuracy, passAtN: i === 2 ? finalPass : accuracy, n: 4, problems: 8 }));
const run = (estimator: string, seed: number, acc: [number, number, number], pass: number, secondsPerStep: number): CompareRun => ({
  estimator,
  seed,
  dir: `out/${estimator}/seed-${seed}`,
  evals: evals(acc, pass),
  secondsPerStep,
  wallSeconds: 20 * secondsPerStep,
});

// Hand-computed below: grpo final accuracy 0.5, 0.6, 0.7 (mean 0.6, sample std 0.1);
// grail 0.7, 0.8, 0.9 (0.8, 0.1); oar-g 0.5, 0.9, 0.7 (0.7, 0.2). Every run starts at 0.5.
const RUNS: CompareRun[] = [
  run('grpo', 0, [0.5, 0.52, 0.5], 0.75, 1),
  run('grpo', 1, [0.5, 0.52, 0.6], 0.75, 2),
  run('grpo', 2, [0.5, 0.56, 0.7], 1, 3),
  run('grail', 2, [0.5, 0.6, 0.9], 1, 3),
  run('grail', 0, [0.5, 0.6, 0.7], 1, 3),
  run('grail', 1, [0.5, 0.5, 0.8], 1, 3),
  run('oar-g', 0, [0.5, 0.5, 0.5], 0.5, 4),
  run('oar-g', 1, [0.5, 0.5, 0.9], 1, 4),
  run('oar-g', 2, [0.5, 0.54, 0.7], 0.75, 4),
];

describe('statistics', () => {
  test('mean and sample std (n - 1)', () => {
    expect(meanStd([0.5, 0.6, 0.7]).mean).toBeCloseTo(0.6, 12);
    expect(meanStd([0.5, 0.6, 0.7]).std).toBeCloseTo(0.1, 12);
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample variance 32/7
    expect(meanStd([2, 4, 4, 4, 5, 5, 7, 9]).std).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(meanStd([0.3])).toEqual({ mean: 0.3, std: Number.NaN, n: 1 });
    expect(meanStd([]).n).toBe(0);
  });

  test('steps to threshold: the first eval step at or above it', () => {
    const e = evals([0.5, 0.55, 0.7], 1);
    expect(stepsToThreshold(e, 0.55)).toBe(10);
    expect(stepsToThreshold(e, 0.56)).toBe(20);
    expect(stepsToThreshold(e, 0.5)).toBe(0);
    expect(stepsToThreshold(e, 0.71)).toBeNull();
    expect(stepsToThreshold(evals([0.1, 0.15, 0.15], 1), 0.1 + 0.05)).toBe(10);
    // a gain is over the run's own start; 100% cannot gain 5 points
    expect(thresholdFor({ kind: 'gain', value: 0.05 }, evals([0.6, 0.62, 0.66], 1))).toBeCloseTo(0.65, 12);
    expect(stepsToThreshold(evals([0.6, 0.62, 0.66], 1), thresholdFor({ kind: 'gain', value: 0.05 }, evals([0.6, 0.62, 0.66], 1)))).toBe(
      20,
    );
    expect(stepsToThreshold(evals([1, 1, 1], 1), thresholdFor({ kind: 'gain', value: 0.05 }, evals([1, 1, 1], 1)))).toBeNull();
    expect(thresholdFor({ kind: 'accuracy', value: 0.3 }, evals([0.6, 0.62, 0.66], 1))).toBe(0.3);
  });

  test('noise verdict: |diff| against 2 x the Welch standard error', () => {
    // grail - grpo = 0.2; SE = sqrt(0.01/3 + 0.01/3) = 0.0816497; 2 SE = 0.163299 < 0.2: beyond
    const a = noiseVerdict([0.7, 0.8, 0.9], [0.5, 0.6, 0.7]);
    expect(a.diff).toBeCloseTo(0.2, 12);
    expect(a.se).toBeCloseTo(0.0816497, 6);
    expect(a.within).toBe(false);
    // oar-g - grpo = 0.1; SE = sqrt(0.04/3 + 0.01/3) = 0.1290994; 2 SE = 0.258 > 0.1: within
    const b = noiseVerdict([0.5, 0.9, 0.7], [0.5, 0.6, 0.7]);
    expect(b.diff).toBeCloseTo(0.1, 12);
    expect(b.se).toBeCloseTo(0.1290994, 6);
    expect(b.within).toBe(true);
    // unequal seed counts: SE = sqrt(0.01/3 + 0.005/2) = 0.0763763
    expect(noiseVerdict([0.7, 0.8, 0.9], [0.55, 0.65]).se).toBeCloseTo(0.0763763, 6);
    // identical runs: no spread and no difference is "within"
    expect(noiseVerdict([0.5, 0.5], [0.5, 0.5])).toEqual({ diff: 0, se: 0, within: true });
    // one seed: no verdict
    expect(noiseVerdict([0.9], [0.5, 0.6]).within).toBeNull();
    expect(noiseVerdict([0.9, 0.8], [0.5]).within).toBeNull();
  });

  test('the table: per estimator over seeds, against grpo', () => {
    const t = summarize(RUNS, ['grpo', 'grail', 'oar-g']);
    expect(t).toMatchObject({
      baseline: 'grpo',
      baselineReason: 'grpo',
      threshold: { kind: 'gain', value: 0.05 },
      n: 4,
      problems: 8,
      finalStep: 20,
    });
    const [grpo, grail, oarg] = t.rows;
    expect(grpo!.seeds).toEqual([0, 1, 2]);
    expect(grpo!.accuracy.mean).toBeCloseTo(0.6, 12);
    expect(grpo!.accuracy.std).toBeCloseTo(0.1, 12);
    // pass@4 0.75, 0.75, 1: mean 0.8333, std sqrt((2 x 0.08333^2 + 0.16667^2) / 2) = 0.1443376
    expect(grpo!.passAtN.mean).toBeCloseTo(0.8333333, 6);
    expect(grpo!.passAtN.std).toBeCloseTo(0.1443376, 6);
    // seed 0 never reaches 0.55, seed 1 at step 20, seed 2 at step 10 (0.56)
    expect(grpo!.thresholdSteps).toEqual([null, 20, 10]);
    expect(grpo!).toMatchObject({ reached: 2, meanStepsToThreshold: 15, secondsPerStep: 2, stepTimeRatio: 1, verdict: null });
    // grail rows came unsorted; seeds 0, 1, 2 reach 0.55 at 10, 20, 10
    expect(grail!.seeds).toEqual([0, 1, 2]);
    expect(grail!.thresholdSteps).toEqual([10, 20, 10]);
    expect(grail!.meanStepsToThreshold).toBeCloseTo(40 / 3, 12);
    expect(grail!.stepTimeRatio).toBeCloseTo(1.5, 12);
    expect(grail!.verdict!.within).toBe(false);
    expect(oarg!).toMatchObject({ reached: 2, meanStepsToThreshold: 20, stepTimeRatio: 2 });
    expect(oarg!.accuracy.std).toBeCloseTo(0.2, 12);
    expect(oarg!.verdict!.within).toBe(true);
    expect(oarg!.start).toEqual({ mean: 0.5, std: 0, n: 3 });
  });

  test('baseline: given, else grpo, else the first estimator; a given threshold', () => {
    const noGrpo = RUNS.filter((r) => r.estimator !== 'grpo');
    const t = summarize(noGrpo, ['oar-g', 'grail'], { threshold: { kind: 'accuracy', value: 0.9 } });
    expect(t).toMatchObject({ baseline: 'oar-g', baselineReason: 'first', threshold: { kind: 'accuracy', value: 0.9 } });
    expect(t.rows[1]!.stepTimeRatio).toBeCloseTo(0.75, 12);
    expect(t.rows[1]!.verdict!.diff).toBeCloseTo(0.1, 12);
    expect(t.rows.map((r) => r.reached)).toEqual([1, 1]);
    expect(summarize(RUNS, ['grpo', 'grail'].concat('oar-g'), { baseline: 'grail' })).toMatchObject({
      baseline: 'grail',
      baselineReason: 'given',
    });
    expect(() => summarize(RUNS, ['grpo', 'grail', 'oar-g'], { baseline: 'rloo' })).toThrow(/baseline rloo is not among/);
    expect(() => summarize(RUNS, ['grpo', 'grail'])).toThrow(/run of oar-g, which is not among/);
    expect(() => summarize(RUNS.slice(0, 3), ['grpo', 'grail'])).toThrow(/no runs of grail/);
  });

  test('one seed: no std, "n/a: one seed" verdicts', () => {
    const t = summarize(
      RUNS.filter((r) => r.seed === 1 && r.estimator !== 'oar-g'),
      ['grpo', 'grail'],
    );
    expect(Number.isNaN(t.rows[0]!.accuracy.std)).toBe(true);
    expect(t.rows[1]!.verdict!.within).toBeNull();
    expect(formatVerdict('grail', 'grpo', t.rows[1]!.verdict!, 1)).toBe(
      'grail vs grpo: final accuracy +20.0 points; noise n/a: one seed (run more --seeds to tell a difference from seed noise)',
    );
    expect(formatMeanStd(t.rows[0]!.accuracy)).toBe('60.0%');
  });
});

describe('text', () => {
  test('fixed-width table: first column left, numbers right', () => {
    expect(
      textTable(
        ['name', 'x'],
        [
          ['a', '1.00'],
          ['longer', '2'],
        ],
      ),
    ).toBe(['name       x', '------  ----', 'a       1.00', 'longer     2'].join('\n'));
  });

  test('the full report', () => {
    const text = formatCompare(summarize(RUNS, ['grpo', 'grail', 'oar-g']), { steps: 20, seeds: [0, 1, 2] });
    expect(text).toBe(
      [
        'rlvr compare: 3 estimators x 3 seeds (0, 1, 2), 20 steps each, same seeds and data order for every estimator',
        'held-out: 8 problems x 4 samples; final = step 20; starting accuracy (step 0) 50.0%; mean ± std over seeds',
        '',
        'estimator  final accuracy        pass@4  steps to +5.0 pts  s/step  time vs grpo',
        '---------  --------------  ------------  -----------------  ------  ------------',
        'grpo         60.0% ± 10.0  83.3% ± 14.4           15 (2/3)    2.00         1.00x',
        'grail        80.0% ± 10.0  100.0% ± 0.0         13.3 (3/3)    3.00         1.50x',
        'oar-g        70.0% ± 20.0  75.0% ± 25.0           20 (2/3)    4.00         2.00x',
        '',
        "baseline: grpo (dr-grpo, the GRAIL paper's baseline, is not in the list); steps to +5.0 pts: first eval step with accuracy 5.0 points above the run's own step-0 accuracy, mean over the seeds that reached it (reached/seeds); s/step: median training step, evaluation excluded",
        'grail vs grpo: final accuracy +20.0 points, beyond the seed spread (|diff| > 2 x Welch SE = 16.3 points)',
        'oar-g vs grpo: final accuracy +10.0 points, within the seed spread (|diff| <= 2 x Welch SE = 25.8 points): not distinguishable from seed noise with 3 seeds',
      ].join('\n'),
    );
  });

  test("the default baseline is dr-grpo, the GRAIL paper's, with grpo beside it", () => {
    // dr-grpo final accuracy 0.6, 0.7, 0.8 (mean 0.7, sample std 0.1)
    const dr = [
      run('dr-grpo', 0, [0.5, 0.5, 0.6], 1, 1),
      run('dr-grpo', 1, [0.5, 0.5, 0.7], 1, 1),
      run('dr-grpo', 2, [0.5, 0.5, 0.8], 1, 1),
    ];
    const t = summarize([...RUNS.slice(0, 6), ...dr], ['dr-grpo', 'grpo', 'grail']);
    expect(t).toMatchObject({ baseline: 'dr-grpo', baselineReason: 'dr-grpo', alsoVs: 'grpo' });
    expect(t.rows.map((r) => [r.estimator, r.verdict?.diff ?? null, r.alsoVerdict?.diff ?? null])).toEqual([
      ['dr-grpo', null, null],
      ['grpo', expect.closeTo(-0.1, 12), null],
      ['grail', expect.closeTo(0.1, 12), expect.closeTo(0.2, 12)],
    ]);
    const lines = formatCompare(t, { steps: 20, seeds: [0, 1, 2] }).split('\n');
    expect(lines[3]).toMatch(/time vs dr-grpo$/);
    expect(lines.slice(-4)).toEqual([
      "baseline: dr-grpo (the GRAIL paper's baseline); steps to +5.0 pts: first eval step with accuracy 5.0 points above the run's own step-0 accuracy, mean over the seeds that reached it (reached/seeds); s/step: median training step, evaluation excluded",
      'grpo vs dr-grpo: final accuracy -10.0 points, within the seed spread (|diff| <= 2 x Welch SE = 16.3 points): not distinguishable from seed noise with 3 seeds',
      'grail vs dr-grpo: final accuracy +10.0 points, within the seed spread (|diff| <= 2 x Welch SE = 16.3 points): not distinguishable from seed noise with 3 seeds',
      'grail vs grpo: final accuracy +20.0 points, beyond the seed spread (|diff| > 2 x Welch SE = 16.3 points)',
    ]);
    // --baseline given: no second comparison
    expect(summarize([...RUNS.slice(0, 6), ...dr], ['dr-grpo', 'grpo', 'grail'], { baseline: 'grpo' })).toMatchObject({
      baseline: 'grpo',
      baselineReason: 'given',
      alsoVs: null,
    });
  });

  test('a greedy column when every run decoded greedily at its last evaluation', () => {
    const withGreedy = (r: CompareRun, g: number): CompareRun => ({
      ...r,
      evals: r.evals.map((e, i) => (i === r.evals.length - 1 ? { ...e, greedyAccuracy: g } : e)),
    });
    // grpo greedy 0.6, 0.7, 0.8 -> 70.0% ± 10.0; grail 0.75 each -> 75.0% ± 0.0
    const runs = [
      withGreedy(RUNS[0]!, 0.6),
      withGreedy(RUNS[1]!, 0.7),
      withGreedy(RUNS[2]!, 0.8),
      ...RUNS.slice(3, 6).map((r) => withGreedy(r, 0.75)),
    ];
    const t = summarize(runs, ['grpo', 'grail']);
    expect(t.rows.map((r) => r.greedy)).toEqual([
      { mean: expect.closeTo(0.7, 12), std: expect.closeTo(0.1, 12), n: 3 },
      { mean: 0.75, std: 0, n: 3 },
    ]);
    const lines = formatCompare(t, { steps: 20, seeds: [0, 1, 2] }).split('\n');
    expect(lines[3]).toBe('estimator  final accuracy        pass@4        greedy  steps to +5.0 pts  s/step  time vs grpo');
    expect(lines[5]).toBe('grpo         60.0% ± 10.0  83.3% ± 14.4  70.0% ± 10.0           15 (2/3)    2.00         1.00x');
    // one run without greedy: no column
    expect(summarize([...runs.slice(0, 5), RUNS[5]!], ['grpo', 'grail']).rows[1]!.greedy).toBeNull();
  });
});
