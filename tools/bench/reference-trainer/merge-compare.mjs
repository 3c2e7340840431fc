// One `rlvr compare` table from runs made in several processes (or on several machines): seeds added later,
// ablation variants beside the committed runs of their baseline.
//   node tools/bench/reference-trainer/merge-compare.mjs [--baseline NAME] [--primary A:B] [--estimators A,B] [--seeds 10,11] [--json FILE] SOURCE...
// --estimators picks the rows (in that order) and leaves the sources' other runs out; --seeds keeps only those seeds'
// runs (a comparison still being extended: the seeds every row has so far).
// A SOURCE is a compare.json (every run in it) or a run directory OUT/ROW/seed-S of `rlvr compare` (its row and
// seed come from the path; its evaluations from evals.jsonl; its s/step is the median training step of
// metrics.jsonl, evaluation excluded, as rlvr compare takes it). A row and seed given twice is an error. Prints the
// table `rlvr compare` prints (mean ± SD over seeds, the tested contrasts: --primary as in rlvr compare) and writes
// the merged runs, with their per-problem counts, with --json.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatCompare, summarize } from '@rlvr/report';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    baseline: { type: 'string' },
    primary: { type: 'string' },
    estimators: { type: 'string' },
    seeds: { type: 'string' },
    json: { type: 'string' },
  },
});
if (positionals.length === 0) {
  console.error('usage: merge-compare.mjs [--baseline NAME] [--primary A:B] [--estimators A,B] [--seeds 10,11] [--json FILE] SOURCE...');
  process.exit(2);
}

const jsonl = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      try {
        return JSON.parse(l);
      } catch (e) {
        throw new Error(`${file}:${i + 1}: not JSON (${e.message})`);
      }
    });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The CompareRun of a run directory OUT/ROW/seed-S. */
function fromRunDir(dir) {
  const m = /^seed-(\d+)$/.exec(basename(dir));
  if (!m) throw new Error(`${dir}: a run directory of rlvr compare ends in seed-S`);
  // the per-problem counts ride along (correct: samples right of n per problem; greedyCorrect: 0/1), so the merged
  // JSON can be re-analysed anywhere (tools/bench/reference-trainer/paired.py)
  const evals = jsonl(join(dir, 'evals.jsonl')).map(({ step, accuracy, passAtN, n, problems, greedyAccuracy, correct, greedyCorrect }) => ({
    step,
    accuracy,
    passAtN,
    n,
    problems,
    ...(greedyAccuracy === undefined ? {} : { greedyAccuracy }),
    ...(correct === undefined ? {} : { correct }),
    ...(greedyCorrect === undefined ? {} : { greedyCorrect }),
  }));
  const steps = jsonl(join(dir, 'metrics.jsonl')).filter((r) => r['time/step_s'] !== undefined);
  return {
    estimator: basename(dirname(dir)),
    seed: Number(m[1]),
    dir,
    evals,
    secondsPerStep: median(steps.map((r) => r['time/step_s'])),
    wallSeconds: steps.reduce((a, r) => a + r['time/step_s'], 0),
  };
}

// With --estimators, a source's runs of other estimators are left out (a committed compare.json holds every
// estimator of its table; an ablation takes only its baseline's runs from it).
const wanted = values.estimators?.split(',');
const seedList = values.seeds?.split(',').map((x) => {
  if (!/^\d+$/.test(x.trim())) throw new Error(`--seeds ${values.seeds}: a comma-separated list of seeds (integers)`);
  return Number(x);
});
const runs = [];
for (const source of positionals) {
  const found = statSync(source).isDirectory() ? [fromRunDir(source)] : JSON.parse(readFileSync(source, 'utf8')).runs;
  for (const run of found) {
    if (wanted && !wanted.includes(run.estimator)) continue;
    if (seedList && !seedList.includes(run.seed)) continue;
    const twice = runs.find((r) => r.estimator === run.estimator && r.seed === run.seed);
    if (twice) throw new Error(`${run.estimator} seed ${run.seed} is given twice: ${twice.dir} and ${run.dir} (${source})`);
    runs.push(run);
  }
}
const estimators = wanted ?? [...new Set(runs.map((r) => r.estimator))];
const missing = estimators.filter((e) => !runs.some((r) => r.estimator === e));
if (missing.length) throw new Error(`--estimators ${missing.join(', ')}: no run of it in the sources`);
const finals = new Set(runs.map((r) => r.evals.at(-1).step));
if (finals.size !== 1) throw new Error(`the runs end at different steps (${[...finals].join(', ')}): not one comparison`);
const primary = values.primary?.split(':');
if (primary !== undefined && primary.length !== 2) throw new Error(`--primary ${values.primary}: must be A:B`);
const table = summarize(runs, estimators, {
  ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
  ...(primary === undefined ? {} : { primary }),
});
const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
console.log(formatCompare(table, { steps: [...finals][0], seeds }));
if (values.json) writeFileSync(values.json, `${JSON.stringify({ sources: positionals, estimators, seeds, table, runs }, null, 2)}\n`);
