// Where the time of an RL step goes, from the time/* columns `rlvr train` writes per step.
//   node tools/bench/reference-trainer/phases.mjs RUN_DIR [RUN_DIR ...]
// Prints, per run, the median seconds of each phase (sample, verify, signals, advantages, update,
// whole step; the first step, which warms up the kernels, is left out) and the step time as a
// ratio to the first run given (the baseline), e.g. a grpo and a grail run of one `rlvr compare`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: phases.mjs RUN_DIR [RUN_DIR ...]');
  process.exit(2);
}
const PHASES = ['sample', 'verify', 'signals', 'advantages', 'update', 'step'];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const rows = dirs.map((dir) => {
  const steps = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((m) => m['time/step_s'] !== undefined && m.step > 1);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  return {
    dir,
    estimator: config.estimator,
    steps: steps.length,
    ...Object.fromEntries(PHASES.map((p) => [p, median(steps.map((m) => m[`time/${p}_s`]))])),
  };
});
const base = rows[0].step;
console.log(['run', 'estimator', 'steps', ...PHASES.map((p) => `${p}_s`), 'step vs first'].join('\t'));
for (const r of rows)
  console.log([r.dir, r.estimator, r.steps, ...PHASES.map((p) => r[p].toFixed(3)), `${(r.step / base).toFixed(2)}x`].join('\t'));
