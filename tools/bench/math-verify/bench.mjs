// Throughput of @rlvr/math-verify on the held-out corpus (486 cases, each with its source's settings) and on the
// near-miss set (2,862 boxed completions of benchmark golds, default reward options: the training workload):
// single-threaded in-process, then VerifierPool with 1 and 2 worker threads, then the pool with pathological
// items that must time out without stalling the rest, and two bare threads grading in a loop (no pool: the ceiling
// of a pool of 2 on this machine). The pool gets the corpus as batches (one rewardBatch /
// verifyBatch per distinct call and options). Ratios are against baselines measured in the same run (the pool of 1
// and the in-process loop for the pool of 2; the 5,000 answers/s goal for one thread), as ratios of the medians and
// as the median of the ratios within each round (pairedRatios: the machine's speed drifts from second to second). CPU time per answer is
// process.cpuUsage() (user + system, every thread of this process) over each measurement. Prints uptime before and
// after. Run after building:
//   npx tsc -b packages/math-verify && node tools/bench/math-verify/bench.mjs [--rounds 5] [--seconds 1] [--json out.json] [--chunk-size 64]
import { availableParallelism, cpus, loadavg } from 'node:os';
import { execSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as api from '../../../packages/math-verify/dist/index.js';
import { loadCorpus, profileFor, runRow } from '../../../packages/math-verify/test/corpus-profile.mjs';

const uptime = () => execSync('uptime').toString().trim();
console.log(`uptime before: ${uptime()}`);
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
    json: { type: 'string' },
    'chunk-size': { type: 'string' },
  },
});
// The machine is shared: single-thread and pool measurements alternate round by round and the medians are reported.
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const rows = loadCorpus(fileURLToPath(new URL('../../../packages/math-verify/test/fixtures/math-verify-cases.jsonl', import.meta.url)));
const items = rows.map((row) => {
  const p = profileFor(row);
  return { row, p, gold: p.wrapGold ? `\\boxed{${row.gold}}` : row.gold };
});

const nearMisses = readFileSync(
  fileURLToPath(new URL('../../../packages/math-verify/test/fixtures/near-misses.jsonl', import.meta.url)),
  'utf8',
)
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));

/** Passes over the near-miss set (boxed completions, default options) for about SECONDS; answers per second. */
function nearMissRate() {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    for (const x of nearMisses) if (api.mathReward(x.pred, x.gold).reward !== 0) throw new Error(`near miss rewarded: ${x.answer}`);
    n += nearMisses.length;
  }
  return n / ((performance.now() - t0) / 1000);
}

/** Repeats full passes over the corpus for about SECONDS; returns answers per second. */
function inProcess() {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    for (const it of items) runRow(api, it.row, it.p);
    n += items.length;
  }
  return n / ((performance.now() - t0) / 1000);
}

function submit(pool, it) {
  return it.p.call === 'answer' ? pool.verify(it.row.gold, it.row.pred, it.p.options) : pool.reward(it.row.pred, it.gold, it.p.options);
}

/**
 * The corpus as pool batches: one `rewardBatch` / `verifyBatch` call per distinct (call, options) of the sources'
 * profiles, as a trainer sends a step's completions (one promise per batch, not per item).
 */
const batches = [];
for (const it of items) {
  const key = `${it.p.call} ${JSON.stringify(it.p.options)}`;
  let b = batches.find((x) => x.key === key);
  if (b === undefined) {
    b = { key, call: it.p.call, options: it.p.options, first: [], second: [] };
    batches.push(b);
  }
  // reward: (completion, gold); verify: (gold, pred)
  b.first.push(it.p.call === 'answer' ? it.row.gold : it.row.pred);
  b.second.push(it.p.call === 'answer' ? it.row.pred : it.gold);
}
const submitBatch = (pool, b) =>
  b.call === 'answer' ? pool.verifyBatch(b.first, b.second, b.options) : pool.rewardBatch(b.first, b.second, b.options);

/** Submits `reps` passes over the corpus at once, as batches (no barrier between passes); returns answers per second. */
async function poolRate(pool, reps) {
  const t0 = performance.now();
  const all = [];
  for (let r = 0; r < reps; r++) for (const b of batches) all.push(submitBatch(pool, b));
  await Promise.all(all);
  return (reps * items.length) / ((performance.now() - t0) / 1000);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The corpus twice, with and without 8 items that run for seconds mixed in; timeout 200 ms, 2 workers. */
async function withTimeouts(concurrency) {
  const slow = { row: { gold: '1', pred: '\\boxed{\\sum_{k=1000}^{3000} k!}' }, p: { call: 'reward', options: {} }, gold: '1' };
  const pool = new api.VerifierPool({ concurrency, timeoutMs: 200 });
  await Promise.all(items.map((it) => submit(pool, it)));
  const clean = [...items, ...items];
  let t0 = performance.now();
  await Promise.all(clean.map((it) => submit(pool, it)));
  const cleanSeconds = (performance.now() - t0) / 1000;
  const batch = [...clean];
  for (let i = 0; i < 8; i++) batch.splice(Math.floor(((i + 0.5) * batch.length) / 8), 0, slow);
  t0 = performance.now();
  const res = await Promise.all(batch.map((it) => submit(pool, it)));
  const secs = (performance.now() - t0) / 1000;
  const timeouts = res.filter((r) => r.reason === 'timeout').length;
  const wrong = res.filter((r, i) => batch[i] !== slow && r.reason === 'timeout').length;
  await pool.close();
  return { items: batch.length, slowItems: 8, timeouts, otherItemsTimedOut: wrong, seconds: secs, secondsWithoutSlowItems: cleanSeconds };
}

/**
 * A CPU-heavy workload (about a millisecond per item: symbolic sums compared by sampling), where the main thread's
 * per-item cost is small next to the work, so pool scaling shows.
 */
const heavy = Array.from({ length: 64 }, (_, i) => ({
  row: { gold: `\\sum_{k=1}^{100} \\frac{x}{k^2+${i}}`, pred: `\\boxed{x\\sum_{k=1}^{100} \\frac{1}{k^2+${i}}}` },
  p: { call: 'reward', options: {} },
  gold: `\\sum_{k=1}^{100} \\frac{x}{k^2+${i}}`,
}));

function heavyInProcess() {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    for (const it of heavy) if (api.mathReward(it.row.pred, it.gold).reward !== 1) throw new Error('heavy item not equal');
    n += heavy.length;
  }
  return n / ((performance.now() - t0) / 1000);
}

/** CPU seconds the process used per wall-clock second in the heavy pool runs: how many cores it actually got. */
const coresUsed = { heavyPool1: [], heavyPool2: [] };

async function heavyPoolRate(pool, reps, key) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const all = [];
  for (let r = 0; r < reps; r++)
    all.push(
      pool.rewardBatch(
        heavy.map((it) => it.row.pred),
        heavy.map((it) => it.gold),
      ),
    );
  await Promise.all(all);
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  coresUsed[key].push((c.user + c.system) / 1e6 / wall);
  return (reps * heavy.length) / wall;
}

/**
 * Two worker threads grading the corpus in a loop as the in-process run does (bare-thread.mjs), no pool and no
 * messages, for SECONDS at once: what two threads can do on this machine, the ceiling of a pool of 2.
 */
const bare = [0, 1].map(() => new Worker(new URL('./bare-thread.mjs', import.meta.url)));
const bareRun = (ms) =>
  Promise.all(bare.map((w) => new Promise((resolve) => w.once('message', resolve).postMessage(ms)))).then((r) => ({
    n: r[0].n + r[1].n,
    ms: Math.max(r[0].ms, r[1].ms),
  }));
const bareRate = async () => {
  const { n, ms } = await bareRun(SECONDS * 1000);
  return (n / ms) * 1000;
};

const load0 = loadavg()[0];
// --chunk-size: the pool's most items per message (its default when not given).
const chunk = values['chunk-size'] === undefined ? {} : { chunkSize: Number(values['chunk-size']) };
const p1 = new api.VerifierPool({ concurrency: 1, timeoutMs: 5_000, ...chunk });
const p2 = new api.VerifierPool({ concurrency: 2, timeoutMs: 5_000, ...chunk });
// Warm-up (the JIT keeps speeding the verifier up for a few seconds): in-process and in every worker.
for (const t0 = performance.now(); performance.now() - t0 < 4000; ) inProcess();
heavyInProcess();
for (let k = 0; k < 10; k++)
  for (const pool of [p1, p2]) await Promise.all([...batches.map((b) => submitBatch(pool, b)), ...heavy.map((it) => submit(pool, it))]);
// Then the corpus for about 4 s of each pool's wall-clock time, as long as the in-process loop was warmed.
for (const pool of [p1, p2])
  for (const t0 = performance.now(); performance.now() - t0 < 4000; ) await Promise.all(batches.map((b) => submitBatch(pool, b)));
await bareRun(4000);
const reps = Math.max(1, Math.round((inProcess() * SECONDS) / items.length));
const heavyReps = Math.max(1, Math.round((heavyInProcess() * SECONDS) / heavy.length));
/**
 * CPU time of the whole process (all threads) per answer, in microseconds: unlike answers per second it does not
 * depend on how much of the shared machine other people are using, and it shows what the pool's messaging costs.
 */
const cpu = { single: [], pool1: [], pool2: [] };
async function timed(key, f) {
  const c0 = process.cpuUsage();
  const rate = await f();
  const c = process.cpuUsage(c0);
  cpu[key].push((c.user + c.system) / (rate.n ?? 1));
  return rate.rate;
}
const counted = (rate, n) => ({ rate, n });
const rounds = [];
const corpusRuns = {
  single: () =>
    timed('single', () => {
      const t0 = performance.now();
      const rate = inProcess();
      return counted(rate, Math.round((rate * (performance.now() - t0)) / 1000));
    }),
  pool1: () => timed('pool1', async () => counted(await poolRate(p1, reps), reps * items.length)),
  pool2: () => timed('pool2', async () => counted(await poolRate(p2, reps), reps * items.length)),
  bare2: bareRate,
};
for (let r = 0; r < ROUNDS; r++) {
  // The machine's speed drifts within seconds: the corpus runs alternate their order round by round, and the ratios
  // are also taken within each round (paired), then their median reported.
  const corpus = {};
  for (const k of r % 2 ? Object.keys(corpusRuns).reverse() : Object.keys(corpusRuns)) corpus[k] = await corpusRuns[k]();
  rounds.push({
    ...corpus,
    nearMisses: nearMissRate(),
    heavySingle: heavyInProcess(),
    heavyPool1: await heavyPoolRate(p1, heavyReps, 'heavyPool1'),
    heavyPool2: await heavyPoolRate(p2, heavyReps, 'heavyPool2'),
  });
}
await p1.close();
await p2.close();
await Promise.all(bare.map((w) => w.terminate()));
const single = median(rounds.map((x) => x.single));
const pool1 = median(rounds.map((x) => x.pool1));
const pool2 = median(rounds.map((x) => x.pool2));
const stall = await withTimeouts(2);
const result = {
  machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), availableParallelism ${availableParallelism()}, node ${process.version}`,
  loadAverage1mBeforeAfter: [+load0.toFixed(2), +loadavg()[0].toFixed(2)],
  corpusCases: items.length,
  rounds: ROUNDS,
  secondsPerMeasurement: SECONDS,
  perRound: rounds.map((x) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, Math.round(v)]))),
  singleThreadAnswersPerSecond: Math.round(single),
  pool1AnswersPerSecond: Math.round(pool1),
  pool2AnswersPerSecond: Math.round(pool2),
  cpuTime: 'process.cpuUsage(), user + system, all threads of this process (the pool workers are idle during single-thread runs)',
  chunkSize: p1.chunkSize,
  cpuMicrosecondsPerAnswer: {
    single: Math.round(median(cpu.single)),
    pool1: Math.round(median(cpu.pool1)),
    pool2: Math.round(median(cpu.pool2)),
  },
  singleThreadOverGoal5000: +(single / 5000).toFixed(2),
  nearMissesSingleThreadAnswersPerSecond: Math.round(median(rounds.map((x) => x.nearMisses))),
  bare2AnswersPerSecond: Math.round(median(rounds.map((x) => x.bare2))),
  pool2OverSingleThread: +(pool2 / single).toFixed(2),
  pairedRatios: {
    what: 'median over rounds of the ratio within each round',
    pool2OverSingleThread: +median(rounds.map((x) => x.pool2 / x.single)).toFixed(2),
    bare2OverSingleThread: +median(rounds.map((x) => x.bare2 / x.single)).toFixed(2),
    pool2OverBare2: +median(rounds.map((x) => x.pool2 / x.bare2)).toFixed(2),
  },
  pool2OverPool1: +(pool2 / pool1).toFixed(2),
  heavy: {
    items: heavy.length,
    singleThreadAnswersPerSecond: Math.round(median(rounds.map((x) => x.heavySingle))),
    pool1AnswersPerSecond: Math.round(median(rounds.map((x) => x.heavyPool1))),
    pool2AnswersPerSecond: Math.round(median(rounds.map((x) => x.heavyPool2))),
    pool2OverPool1: +(median(rounds.map((x) => x.heavyPool2)) / median(rounds.map((x) => x.heavyPool1))).toFixed(2),
    coresUsedPool1: +median(coresUsed.heavyPool1).toFixed(2),
    coresUsedPool2: +median(coresUsed.heavyPool2).toFixed(2),
  },
  mathVerifyBaselineAnswersPerSecond: 37,
  singleThreadOverMathVerify: +(single / 37).toFixed(1),
  timeoutRun: { ...stall, seconds: +stall.seconds.toFixed(2), secondsWithoutSlowItems: +stall.secondsWithoutSlowItems.toFixed(2) },
};
console.log(JSON.stringify(result, null, 2));
console.log(`uptime after: ${uptime()}`);
if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
