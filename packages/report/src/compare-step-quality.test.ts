import { describe, expect, test } from 'vitest';
import { formatCompare } from './compare-format.js';
import { summarize } from './compare-stats.js';
import type { CompareRun } from './compare-stats.js';

/** A final eval's Step-Quality metrics with the given per-run means (the rest as an evaluation writes them). */
const sq = (density: number, found: number | null, at: number | null, tokens: number | null) => ({
  problems: 8,
  samples: 32,
  usefulDensity: { mean: density, se: 0.01, problems: 8 },
  noSteps: 0,
  wrong: 10,
  localised: { mean: found, se: null, problems: found === null ? 0 : 5 },
  errorAt: { mean: at, se: null, problems: at === null ? 0 : 5 },
  firstErrors: { arithmetic: 10 },
  tokensPerSolved: { value: tokens, se: null, tokens: 800, solved: tokens === null ? 0 : 22 },
});
const run = (estimator: string, seed: number, stepQuality?: ReturnType<typeof sq>): CompareRun => ({
  estimator,
  seed,
  dir: `out/${estimator}/seed-${seed}`,
  evals: [
    { step: 0, accuracy: 0.5, passAtN: 0.5, n: 4, problems: 8 },
    { step: 10, accuracy: 0.6, passAtN: 0.7, n: 4, problems: 8, ...(stepQuality && { stepQuality }) },
  ],
  secondsPerStep: 1,
  wallSeconds: 10,
});

describe('rlvr compare: the Step-Quality metrics of the final evaluation', () => {
  test('per estimator, mean ± SD over seeds of each run value; a null value is left out, all null is -', () => {
    const runs = [
      run('grpo', 0, sq(0.5, 0.8, 0.25, 40)),
      run('grpo', 1, sq(0.7, 1, 0.75, 60)),
      run('scope-rl', 0, sq(0.9, null, null, null)),
      run('scope-rl', 1, sq(0.8, 0.5, 0.5, 30)),
    ];
    const text = formatCompare(summarize(runs, ['grpo', 'scope-rl']), { steps: 10, seeds: [0, 1], runs });
    const lines = text.split('\n');
    const at = lines.indexOf('step quality of the final evaluation (per run a mean over problems; here mean ± SD over seeds):');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^estimator\s+seeds\s+useful steps\s+first error found\s+first error at\s+tokens\/solved$/);
    // grpo: density 0.6 ± SD sqrt(0.02) = 0.1414; found 0.9 ± 0.1414; at 0.5 ± 0.3536; tokens 50 ± 14.1
    expect(lines.slice(at + 2, at + 5).map((l) => l.trim().split(/ {2,}/))).toEqual([
      expect.anything(), // the rule under the head
      ['grpo', '2', '60.0% ± 14.1%', '90.0% ± 14.1%', '0.50 ± 0.35', '50.0 ± 14.1'],
      ['scope-rl', '2', '85.0% ± 7.1%', '50.0%', '0.50', '30.0'],
    ]);
  });

  test('no block without the metrics (a data file without chains)', () => {
    const runs = [run('grpo', 0), run('grail', 0)];
    expect(formatCompare(summarize(runs, ['grpo', 'grail']), { steps: 10, seeds: [0], runs })).not.toContain('step quality');
  });
});
