// rlvr train's step time per case, in one process, on the embedded default (warm-up checkpoint,
// 16 prompts x 4 completions), a few steps each, evaluation reduced to one problem (it is not part of
// a step's time). A case is a worker count (2 policy workers against 1, the in-process path; GRAIL)
// or, with --estimators, an estimator at the first worker count: dr-grpo beside plugin methods
// (--plugin FILE, repeatable, as `rlvr train --plugin`).
//   node tools/bench/workers/step.mjs [--steps 6] [--workers 1,2] [--rounds 1]
//   node tools/bench/workers/step.mjs --estimators dr-grpo,gar,verigate,entropy-shaping \
//     --plugin methods/gar/dist/index.js --plugin methods/verigate/dist/index.js \
//     --plugin methods/entropy-shaping/dist/index.js [--steps 6] [--rounds 2]
// --case LABEL=JSON (repeatable) adds a case after the estimators: the JSON merged into the train config, e.g.
// GAR's two readings against Dr. GRPO (the default is the authors' grad-x-hidden vector):
//   node tools/bench/workers/step.mjs --estimators dr-grpo,gar --plugin methods/gar/dist/index.js \
//     --case 'gar-head-weight={"estimator":"gar","saliency":{"gar":{"vector":"head-weight"}}}' --steps 8 --rounds 3
// Prints JSON: per case the median seconds of each phase over the steps after the first (which
// warms the kernels up), the weight sync (publish + slowest replica re-load) and gradient reduce
// seconds per step, and each phase's ratio to the first case. `uptime` before and after.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseTrainConfig, runTrain } from '@rlvr/reference-trainer';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '6' },
    workers: { type: 'string', default: '1,2' },
    rounds: { type: 'string', default: '1' },
    estimators: { type: 'string' },
    plugin: { type: 'string', multiple: true, default: [] },
    case: { type: 'string', multiple: true, default: [] },
  },
});
// --case LABEL=JSON: a labelled case whose JSON is merged into the train config
const extra = Object.fromEntries(
  values.case.map((c) => {
    const at = c.indexOf('=');
    if (at < 1) throw new Error(`--case ${c}: expected LABEL=JSON`);
    return [c.slice(0, at), JSON.parse(c.slice(at + 1))];
  }),
);
const steps = Number(values.steps);
const workerCounts = values.workers.split(',').map(Number);
// the cases: worker counts (GRAIL, the config's default estimator) or estimators at the first count
const estimators = values.estimators?.split(',');
const counts = estimators ? [...estimators, ...Object.keys(extra)] : workerCounts;
const caseConfig = (c) =>
  estimators ? { workers: workerCounts[0], estimator: c, plugins: values.plugin, ...(extra[c] ?? {}) } : { workers: c };
const rounds = Number(values.rounds);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const PHASES = ['sample', 'verify', 'signals', 'advantages', 'update', 'weight_sync', 'grad_reduce', 'step'];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const before = uptime();
const runs = Object.fromEntries(counts.map((n) => [n, []]));
const root = mkdtempSync(join(tmpdir(), 'rlvr-workers-bench-'));
try {
  // rounds alternate the counts, so a change of machine load hits both
  for (let r = 0; r < rounds; r++) {
    for (const n of counts) {
      const out = join(root, `${n}-r${r}`);
      const config = parseTrainConfig({
        steps,
        ...caseConfig(n),
        backend: 'wasm',
        eval: { every: 0, problems: 1, n: 1, greedy: false },
        checkpointEvery: 0,
        sampleEvery: 0,
      });
      await runTrain(config, out);
      const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      runs[n].push(...metrics.filter((m) => m.step > 1 && m['time/step_s'] !== undefined));
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const r3 = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
const table = Object.fromEntries(
  counts.map((n) => [
    n,
    Object.fromEntries(PHASES.map((p) => [p, r3(median(runs[n].map((m) => m[`time/${p}_s`]).filter((x) => x !== undefined)))])),
  ]),
);
const base = table[counts[0]];
const ratios = Object.fromEntries(
  counts
    .slice(1)
    .map((n) => [
      `${n}/${counts[0]}`,
      Object.fromEntries(PHASES.filter((p) => base[p] > 0 && table[n][p] !== null).map((p) => [p, r3(table[n][p] / base[p])])),
    ]),
);
console.log(
  JSON.stringify(
    {
      uptime_before: before,
      available_parallelism: availableParallelism(),
      steps_measured: steps - 1,
      rounds,
      ...(estimators ? { workers: workerCounts[0], plugins: values.plugin, cases: extra } : {}),
      seconds: table,
      ratios,
      uptime_after: uptime(),
    },
    null,
    2,
  ),
);
