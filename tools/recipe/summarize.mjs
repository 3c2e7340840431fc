// The recipe study's table: `node tools/recipe/summarize.mjs RUN_DIR... [--json]`.
// Per run: the knobs that differ between the runs given, the held-out accuracy at the first and last evaluation,
// the gain with its paired standard error (over problems), the worst fall after the midpoint (in paired s.e.),
// the share of the step-0 gap to pass@n closed, seconds per step, and the CPU-minutes of the run (wall x workers).
// Then one row per cell (runs that differ only in the seed): the mean gain over seeds and its seed-to-seed SD.
// `--json`: each run's config, every evaluation (per-problem counts) and the check, for a page to commit beside its table.
import { basename } from 'node:path';
import { learningCheck, readRunDir } from '@rlvr/report';

const args = process.argv.slice(2);
const json = args.includes('--json');
const dirs = args.filter((a) => a !== '--json');
if (dirs.length === 0) {
  console.error('usage: node tools/recipe/summarize.mjs RUN_DIR... [--json]');
  process.exit(2);
}

// the knobs a practitioner varies (issue 40's list), as dotted paths into config.json
const KNOBS = [
  'checkpoint',
  'steps',
  'trainer.schedule.type',
  'trainer.schedule.lr',
  'trainer.schedule.warmupSteps',
  'rollout.prompts',
  'rollout.groupSize',
  'rollout.temperature',
  'trainer.clipLow',
  'trainer.clipHigh',
  'trainer.klCoef',
  'trainer.aggregation',
  'trainer.maxGradNorm',
  'estimator',
];
const get = (o, path) => path.split('.').reduce((v, k) => (v == null ? undefined : v[k]), o);

const runs = [];
for (const dir of dirs) {
  const run = await readRunDir(dir);
  if (run.config === null || run.evals === null || run.evals.length < 2) {
    console.error(`${dir}: no config.json or fewer than two evaluations; left out`);
    continue;
  }
  const config = run.config;
  const evals = [...run.evals].sort((a, b) => a.step - b.step);
  const check = learningCheck(evals);
  const stepSeconds = run.metrics.map((m) => m['time/step_s']).filter((x) => typeof x === 'number');
  const workers = typeof config.workers === 'number' ? config.workers : 1;
  const evalSeconds = run.metrics.map((m) => m['time/eval_s']).filter((x) => typeof x === 'number');
  runs.push({
    name: basename(dir),
    config,
    seed: config.seed,
    knobs: Object.fromEntries(KNOBS.map((k) => [k, k === 'checkpoint' ? basename(config.checkpoint) : get(config, k)])),
    first: evals[0],
    last: evals.at(-1),
    check,
    secondsPerStep: stepSeconds.length > 0 ? stepSeconds.reduce((a, x) => a + x, 0) / stepSeconds.length : Number.NaN,
    cpuMinutes: ((stepSeconds.reduce((a, x) => a + x, 0) + evalSeconds.reduce((a, x) => a + x, 0)) * workers) / 60,
    evalsAt: evals.map((e) => `${e.step}:${(100 * e.accuracy).toFixed(1)}`).join(' '),
    evals,
  });
}

const varied = KNOBS.filter((k) => new Set(runs.map((r) => JSON.stringify(r.knobs[k]))).size > 1);
const pct = (x) => (100 * x).toFixed(1);
const cellKey = (r) => JSON.stringify(varied.map((k) => r.knobs[k]));

if (json) {
  // every evaluation per problem, the config and the check; the first and last are in `evals`
  console.log(JSON.stringify({ varied, runs: runs.map(({ first: _f, last: _l, ...r }) => r) }, null, 2));
} else {
  console.log(
    `| run | ${varied.join(' | ')} | seed | evaluations (step:accuracy %) | gain (paired s.e.) | gain / s.e. | worst fall after midpoint | gap closed | s/step |`,
  );
  console.log(`| --- | ${varied.map(() => '---').join(' | ')} | --- | --- | --- | --- | --- | --- | --- |`);
  for (const r of runs) {
    const c = r.check;
    const fall = c === null ? '-' : c.worstFall === null ? 'none' : `${pct(c.worstFall.change.mean)} (${c.worstFall.se.toFixed(1)} s.e.)`;
    console.log(
      `| ${r.name} | ${varied.map((k) => r.knobs[k]).join(' | ')} | ${r.seed} | ${r.evalsAt} | ${c === null ? '-' : `${c.gain.mean >= 0 ? '+' : ''}${pct(c.gain.mean)} (${pct(c.gain.standardError)})`} | ${c === null ? '-' : c.gainSe.toFixed(1)} | ${fall} | ${c === null || !Number.isFinite(c.gapClosed) ? '-' : `${Math.round(100 * c.gapClosed)}%`} | ${r.secondsPerStep.toFixed(2)} |`,
    );
  }
  const cells = new Map();
  for (const r of runs) cells.set(cellKey(r), [...(cells.get(cellKey(r)) ?? []), r]);
  if ([...cells.values()].some((rs) => rs.length > 1)) {
    console.log(`\n| cell: ${varied.join(' | ')} | seeds | mean gain | seed-to-seed SD | mean gain / s.e. |`);
    console.log(`| ${varied.map(() => '---').join(' | ')} | --- | --- | --- | --- |`);
    for (const rs of cells.values()) {
      const gains = rs.map((r) => r.check?.gain.mean ?? Number.NaN);
      const mean = gains.reduce((a, x) => a + x, 0) / gains.length;
      const sd = gains.length > 1 ? Math.sqrt(gains.reduce((a, x) => a + (x - mean) ** 2, 0) / (gains.length - 1)) : Number.NaN;
      const z = rs.reduce((a, r) => a + (r.check?.gainSe ?? Number.NaN), 0) / rs.length;
      console.log(
        `| ${varied.map((k) => rs[0].knobs[k]).join(' | ')} | ${rs.map((r) => r.seed).join(',')} | ${pct(mean)} | ${Number.isFinite(sd) ? pct(sd) : '-'} | ${z.toFixed(1)} |`,
      );
    }
  }
  const cpu = runs.reduce((a, r) => a + r.cpuMinutes, 0);
  console.log(`\n${runs.length} runs, ${(cpu / 60).toFixed(2)} CPU-hours (seconds of the steps and evaluations x policy workers)`);
}
