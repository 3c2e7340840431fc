import { describe, expect, test } from 'vitest';
import { textTable } from '@rlvr/core';
import { formatCompare, formatContrast, formatMeanStd } from './compare-format.js';
import { meanStd, stepsToThreshold, summarize, thresholdFor } from './compare-stats.js';
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

  test('contrasts: paired by seed, the primary unadjusted, the secondaries Holm-adjusted; SciPy-checked numbers', () => {
    const t = summarize(RUNS, ['grpo', 'grail', 'oar-g']);
    // by default the primary is grail against the baseline (grpo here), then every other row against the baseline
    expect(t.primaryReason).toBe('default');
    const [primary, oarg] = t.contrasts;
    // grail - grpo is 0.2 on every seed (up to rounding): no spread, p about 0; Wilcoxon over 3 positive pairs: 2 / 2^3
    expect(primary).toMatchObject({ a: 'grail', b: 'grpo', role: 'primary', test: 'paired t', seeds: [0, 1, 2], wilcoxonP: 0.25 });
    expect(primary!.p).toBeLessThan(1e-10);
    expect(primary!.diff).toBeCloseTo(0.2, 12);
    expect(primary!.detected).toBe(true);
    expect(primary!.pairsFor80).toBeNull();
    // oar-g - grpo: 0, 0.3, 0 -> mean 0.1, SD sqrt(0.03), t = 1 on 2 df: scipy.stats.ttest_rel p 0.42264973081037416
    expect(oarg).toMatchObject({ a: 'oar-g', b: 'grpo', role: 'secondary', test: 'paired t', detected: false });
    expect(oarg!.sdDiff).toBeCloseTo(Math.sqrt(0.03), 12);
    expect(oarg!.p).toBeCloseTo(0.42264973081037416, 12);
    // one secondary: Holm leaves it as it is; one nonzero pair: Wilcoxon p 1
    expect(oarg!.adjustedP).toBe(oarg!.p);
    expect(oarg!.wilcoxonP).toBe(1);
    // scipy.stats.nct, two-sided paired t at alpha 0.05, 80% power, SD sqrt(0.03): 2357, 591, 264 pairs
    expect(oarg!.pairsFor80).toEqual([
      { delta: 0.01, pairs: 2357 },
      { delta: 0.02, pairs: 591 },
      { delta: 0.03, pairs: 264 },
    ]);
  });

  test('differences without spread (SD 0) give no power estimate, and the line says why', () => {
    // a copy of grpo under another name: the same accuracy on every seed, every difference 0
    const same = RUNS.filter((r) => r.estimator === 'grpo').map((r) => ({ ...r, estimator: 'copy' }));
    const t = summarize([...RUNS.filter((r) => r.estimator === 'grpo'), ...same], ['grpo', 'copy']);
    const c = t.contrasts[0]!;
    expect(c).toMatchObject({ a: 'copy', b: 'grpo', diff: 0, sdDiff: 0, detected: false, pairsFor80: null });
    expect(formatContrast(c, 0)).toMatch(
      /final accuracy \+0\.0 points .*: no difference detected at alpha 0\.05; the paired differences do not vary \(SD 0\): no power estimate from them$/,
    );
  });

  test('a given primary; Welch when the seed lists differ; one seed: nothing to test', () => {
    const t = summarize(RUNS, ['grpo', 'grail', 'oar-g'], { primary: ['oar-g', 'grail'] });
    expect(t.primaryReason).toBe('given');
    expect(t.contrasts.map((c) => [c.role, c.a, c.b])).toEqual([
      ['primary', 'oar-g', 'grail'],
      ['secondary', 'grail', 'grpo'],
      ['secondary', 'oar-g', 'grpo'],
    ]);
    // Holm over the two secondaries: the smaller p (about 0) is doubled, the larger kept (x 1), never below the smaller
    expect(t.contrasts[1]!.adjustedP).toBeLessThan(1e-9);
    expect(t.contrasts[2]!.adjustedP).toBeCloseTo(0.42264973081037416, 12);
    expect(() => summarize(RUNS, ['grpo', 'grail'].concat('oar-g'), { primary: ['grail', 'rloo'] })).toThrow(/rloo is not among/);
    expect(() => summarize(RUNS, ['grpo', 'grail'].concat('oar-g'), { primary: ['grail', 'grail'] })).toThrow(/with itself/);
    // grail seeds 0-2 against grpo seeds 0 and 1: not pairs; scipy.stats.ttest_ind(equal_var=False) p 0.08244065846409362
    const w = summarize(
      RUNS.filter((r) => r.estimator !== 'oar-g' && !(r.estimator === 'grpo' && r.seed === 2)).map((r) =>
        r.estimator === 'grpo' ? { ...r, evals: r.evals.map((e, i) => (i === 2 ? { ...e, accuracy: e.accuracy + 0.05 } : e)) } : r,
      ),
      ['grpo', 'grail'],
    );
    expect(w.contrasts[0]).toMatchObject({ test: 'Welch', seeds: [0, 1, 2], sdDiff: null, wilcoxonP: null, pairsFor80: null });
    expect(w.contrasts[0]!.p).toBeCloseTo(0.08244065846409362, 12);
    const one = summarize(
      RUNS.filter((r) => r.seed === 1 && r.estimator !== 'oar-g'),
      ['grpo', 'grail'],
    );
    expect(one.contrasts[0]!.detected).toBeNull();
    expect(formatContrast(one.contrasts[0]!, 0)).toBe(
      'primary: grail - grpo: final accuracy +20.0 points; n/a: a side has one seed (run more --seeds to test it)',
    );
    // a single estimator: no contrast
    expect(summarize(RUNS.slice(0, 3), ['grpo']).contrasts).toEqual([]);
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
    expect(grpo!).toMatchObject({ reached: 2, meanStepsToThreshold: 15, secondsPerStep: 2, stepTimeRatio: 1 });
    // grail rows came unsorted; seeds 0, 1, 2 reach 0.55 at 10, 20, 10
    expect(grail!.seeds).toEqual([0, 1, 2]);
    expect(grail!.thresholdSteps).toEqual([10, 20, 10]);
    expect(grail!.meanStepsToThreshold).toBeCloseTo(40 / 3, 12);
    expect(grail!.stepTimeRatio).toBeCloseTo(1.5, 12);
    expect(oarg!).toMatchObject({ reached: 2, meanStepsToThreshold: 20, stepTimeRatio: 2 });
    expect(oarg!.accuracy.std).toBeCloseTo(0.2, 12);
    expect(oarg!.start).toEqual({ mean: 0.5, std: 0, n: 3 });
  });

  test('baseline: given, else grpo, else the first estimator; a given threshold', () => {
    const noGrpo = RUNS.filter((r) => r.estimator !== 'grpo');
    const t = summarize(noGrpo, ['oar-g', 'grail'], { threshold: { kind: 'accuracy', value: 0.9 } });
    expect(t).toMatchObject({ baseline: 'oar-g', baselineReason: 'first', threshold: { kind: 'accuracy', value: 0.9 } });
    expect(t.rows[1]!.stepTimeRatio).toBeCloseTo(0.75, 12);
    expect(t.contrasts[0]!.diff).toBeCloseTo(0.1, 12);
    expect(t.rows.map((r) => r.reached)).toEqual([1, 1]);
    expect(summarize(RUNS, ['grpo', 'grail'].concat('oar-g'), { baseline: 'grail' })).toMatchObject({
      baseline: 'grail',
      baselineReason: 'given',
    });
    expect(() => summarize(RUNS, ['grpo', 'grail', 'oar-g'], { baseline: 'rloo' })).toThrow(/baseline rloo is not among/);
    expect(() => summarize(RUNS, ['grpo', 'grail'])).toThrow(/run of oar-g, which is not among/);
    expect(() => summarize(RUNS.slice(0, 3), ['grpo', 'grail'])).toThrow(/no runs of grail/);
  });

  test('one seed: no std', () => {
    const t = summarize(
      RUNS.filter((r) => r.seed === 1 && r.estimator !== 'oar-g'),
      ['grpo', 'grail'],
    );
    expect(Number.isNaN(t.rows[0]!.accuracy.std)).toBe(true);
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
        'held-out: 8 problems x 4 samples; final = step 20; starting accuracy (step 0) 50.0%; mean ± SD over seeds',
        '',
        'estimator  final accuracy        pass@4  steps to +5.0 pts  s/step  time vs grpo',
        '---------  --------------  ------------  -----------------  ------  ------------',
        'grpo         60.0% ± 10.0  83.3% ± 14.4           15 (2/3)    2.00         1.00x',
        'grail        80.0% ± 10.0  100.0% ± 0.0         13.3 (3/3)    3.00         1.50x',
        'oar-g        70.0% ± 20.0  75.0% ± 25.0           20 (2/3)    4.00         2.00x',
        '',
        "baseline: grpo (dr-grpo, the GRAIL paper's baseline, is not in the list); steps to +5.0 pts: first eval step with accuracy 5.0 points above the run's own step-0 accuracy, mean over the seeds that reached it (reached/seeds); s/step: median training step, evaluation excluded",
        'contrasts on final accuracy, runs of one seed paired; the primary unadjusted, the secondaries Holm-adjusted among themselves:',
        'primary: grail - grpo: final accuracy +20.0 points (95% CI +20.0 to +20.0; paired t p = < 1e-6, Wilcoxon p = 0.25, 3 pairs): a difference at alpha 0.05',
        'secondary (Holm over 1): oar-g - grpo: final accuracy +10.0 points (95% CI -33.0 to +53.0; paired t p = 0.42 (Holm 0.42), Wilcoxon p = 1.00, 3 pairs): no difference detected at alpha 0.05; 80% power at 1/2/3 points needs 2357/591/264 pairs',
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
    // grail against dr-grpo is the primary; grpo against dr-grpo and grail against grpo (beside it) are secondaries
    expect(t.contrasts.map((c) => [c.role, c.a, c.b, c.diff])).toEqual([
      ['primary', 'grail', 'dr-grpo', expect.closeTo(0.1, 12)],
      ['secondary', 'grpo', 'dr-grpo', expect.closeTo(-0.1, 12)],
      ['secondary', 'grail', 'grpo', expect.closeTo(0.2, 12)],
    ]);
    const lines = formatCompare(t, { steps: 20, seeds: [0, 1, 2] }).split('\n');
    expect(lines[3]).toMatch(/time vs dr-grpo$/);
    expect(lines.at(-5)).toBe(
      "baseline: dr-grpo (the GRAIL paper's baseline); steps to +5.0 pts: first eval step with accuracy 5.0 points above the run's own step-0 accuracy, mean over the seeds that reached it (reached/seeds); s/step: median training step, evaluation excluded",
    );
    expect(lines.slice(-3).map((l) => l.split(':').slice(0, 2).join(':'))).toEqual([
      'primary: grail - dr-grpo',
      'secondary (Holm over 2): grpo - dr-grpo',
      'secondary (Holm over 2): grail - grpo',
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
