// The long fuzz run of @rlvr/math-verify (the suite runs a small version): N generated strings (default 100,000)
// through the pure functions and through VerifierPool, and N/5 pairs of canonical answers for the symmetry property.
// Fails (exit 1) on any exception, any worker death, any hang (an item the pool had to time out, or an in-process
// call over --hang-ms), or any asymmetric verdict. Prints uptime before and after. Run after building:
//   npx tsc -b packages/math-verify && node tools/bench/math-verify/fuzz.mjs [--count 100000] [--seed 20260101]
import { execSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import * as api from '../../../packages/math-verify/dist/index.js';
import { canonicalPair, latexish } from '../../../packages/math-verify/test/fuzz-arbitraries.mjs';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '20260101' },
    'hang-ms': { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '2' },
  },
});
const N = Number(values.count);
const SEED = Number(values.seed);
const HANG_MS = Number(values['hang-ms']);
const uptime = () => execSync('uptime').toString().trim();
console.log(`uptime before: ${uptime()}`);

const strings = fc.sample(latexish, { numRuns: N, seed: SEED });
const problems = [];
let slowest = { ms: 0, input: '' };

// 1. In-process: each string as a completion and as an answer, against the next string as gold.
let t0 = performance.now();
for (let i = 0; i < N; i++) {
  const a = strings[i];
  const b = strings[(i + 1) % N];
  const t = performance.now();
  try {
    for (const r of [api.verifyAnswer(b, a), api.mathReward(a, b), api.mathReward(a, b, { fallbacks: true })]) {
      if (typeof r.reason !== 'string') problems.push({ kind: 'no reason', a, b });
    }
  } catch (e) {
    problems.push({ kind: 'exception', a, b, error: String(e) });
  }
  const ms = performance.now() - t;
  if (ms > slowest.ms) slowest = { ms, input: a };
  if (ms > HANG_MS) problems.push({ kind: 'hang', a, b, ms });
}
const inProcessSeconds = (performance.now() - t0) / 1000;

// 2. Through the pool: every string as a completion; a worker death or a timeout is a failure here.
const pool = new api.VerifierPool({ concurrency: Number(values.concurrency), timeoutMs: 10_000 });
t0 = performance.now();
const golds = strings.map((_, i) => strings[(i + 7) % N]);
const results = [];
for (let i = 0; i < N; i += 5000) results.push(...(await pool.rewardBatch(strings.slice(i, i + 5000), golds.slice(i, i + 5000))));
const poolSeconds = (performance.now() - t0) / 1000;
const stats = pool.stats;
await pool.close();
results.forEach((r, i) => {
  if (r.reason === 'timeout' || r.reason.startsWith('worker_failed')) problems.push({ kind: r.reason, a: strings[i], b: golds[i] });
  else if (r.reward !== api.mathReward(strings[i], golds[i]).reward)
    problems.push({ kind: 'pool differs from in-process', a: strings[i], b: golds[i] });
});

// 3. Symmetry on canonical forms (numbers, expressions, sets, tuples, intervals).
const pairs = fc.sample(canonicalPair, { numRuns: Math.ceil(N / 5), seed: SEED + 1 });
let equalPairs = 0;
for (const [a, b] of pairs) {
  const ab = api.verifyAnswer(a, b);
  const ba = api.verifyAnswer(b, a);
  if (ab.equal) equalPairs++;
  if (ab.equal !== ba.equal) problems.push({ kind: 'asymmetric', a, b, ab: ab.reason, ba: ba.reason });
}

console.log(
  JSON.stringify(
    {
      strings: N,
      callsInProcess: 3 * N,
      inProcessSeconds: Number(inProcessSeconds.toFixed(1)),
      slowestInProcessMs: Number(slowest.ms.toFixed(1)),
      slowestInput: slowest.input.slice(0, 120),
      poolItems: results.length,
      poolSeconds: Number(poolSeconds.toFixed(1)),
      poolStats: stats,
      symmetryPairs: pairs.length,
      symmetryPairsEqual: equalPairs,
      problems: problems.length,
    },
    null,
    2,
  ),
);
for (const p of problems.slice(0, 20)) console.log(JSON.stringify(p));
console.log(`uptime after: ${uptime()}`);
process.exit(problems.length === 0 ? 0 : 1);
