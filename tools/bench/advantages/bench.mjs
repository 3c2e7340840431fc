// Tokens per second of the `grail` and `oar-g` estimators on B rollouts x T
// tokens, against a vectorised NumPy version of the same arithmetic
// (numpy_weights.py) measured in the same run on the same scores. Also checks
// that both compute the same weights.
//
// Times are CPU time of the process (user + system, all threads), not wall
// time: on a shared machine wall time mostly measures the other jobs. Rounds
// alternate the two sides (rlvr runs, then a NumPy process), so both see the
// same background load; the table gives the minimum and the median over all
// timed runs of all rounds.
//
// Build first: npx tsc -b packages/advantages
// Run:         node tools/bench/advantages/bench.mjs [--rollouts 256] [--tokens 4096] [--repeats 9] [--rounds 3]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng, SIGNAL_NAMES, SPAN_STRIDE, Signals } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const B = arg('rollouts', 256);
const T = arg('tokens', 4096);
const REPEATS = arg('repeats', 9);
const ROUNDS = arg('rounds', 3);
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';

/** Every rollout has T tokens (the NumPy side then needs no padding: its best case). */
function makeBatch(rng) {
  const N = B * T;
  const batch = {
    numRollouts: B,
    groupIndex: Int32Array.from({ length: B }, (_, i) => i >> 3), // groups of 8
    promptTokens: new Int32Array(0),
    promptOffsets: new Int32Array(B + 1),
    completionTokens: new Int32Array(N),
    completionOffsets: Int32Array.from({ length: B + 1 }, (_, i) => i * T),
    rewards: Float32Array.from({ length: B }, () => (rng.float() < 0.4 ? 1 : 0)),
    finish: new Uint8Array(B),
    spans: new Int32Array(B * SPAN_STRIDE).fill(-1),
  };
  for (let i = 0; i < B; i++) {
    if (rng.float() < 0.1) continue; // about 10% without an answer
    const closeEnd = T - 1 - rng.int(200); // post-answer tail incl. EOS
    const contentStart = closeEnd - 1 - (1 + rng.int(8));
    batch.spans.set([contentStart - 3, contentStart, contentStart, closeEnd - 1, closeEnd - 1, closeEnd], i * SPAN_STRIDE);
  }
  const scores = new Float32Array(N);
  for (let t = 0; t < N; t++) scores[t] = Math.exp(-3 + 2 * rng.normal());
  return { batch, scores };
}

/** Minimum and median: on a shared machine the minimum is the least disturbed run. */
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[s.length >> 1] };
}

const estimators = { grail: prepareEstimator('grail'), 'oar-g': prepareEstimator('oar-g') };

/** Timed runs of one estimator; appends ms to `into` and returns the last result. */
function timeJs(name, batch, signals, into) {
  const est = estimators[name];
  let result;
  for (let k = 0; k < REPEATS; k++) {
    const t0 = process.cpuUsage();
    result = est.estimate(batch, signals);
    const d = process.cpuUsage(t0);
    into.push((d.user + d.system) / 1e3);
  }
  return result;
}

const rng = new Rng(7);
const { batch, scores } = makeBatch(rng);
const signals = new Signals(B * T, { [SIGNAL_NAMES.gradXEmb]: scores, [SIGNAL_NAMES.noisyKl]: scores });
const dir = mkdtempSync(join(tmpdir(), 'rlvr-bench-adv-'));
try {
  writeFileSync(join(dir, 'scores.f32'), scores);
  writeFileSync(join(dir, 'rewards.f32'), batch.rewards);
  writeFileSync(join(dir, 'groups.i32'), batch.groupIndex);
  writeFileSync(join(dir, 'spans.i32'), batch.spans);
  const names = ['grail', 'oar-g'];
  const js = { grail: [], 'oar-g': [] };
  const np = { grail: { float32: [], float64: [] }, 'oar-g': { float32: [], float64: [] } };
  const results = {};
  let numpyVersion = '?';
  for (const name of names) for (let k = 0; k < 3; k++) estimators[name].estimate(batch, signals); // JIT warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) results[name] = timeJs(name, batch, signals, js[name]);
    const py = spawnSync(
      PYTHON,
      [fileURLToPath(new URL('./numpy_weights.py', import.meta.url)), dir, String(B), String(T), String(REPEATS)],
      { encoding: 'utf8' },
    );
    if (py.status !== 0) throw new Error(`numpy_weights.py failed:\n${py.stderr}`);
    const out = JSON.parse(py.stdout);
    numpyVersion = out.numpy;
    for (const name of names) for (const dtype of ['float32', 'float64']) np[name][dtype].push(...out[name][dtype]);
  }
  const tokens = B * T;
  const lines = [];
  lines.push(
    `advantages bench: ${B} rollouts x ${T} tokens = ${tokens} tokens, ${ROUNDS} rounds x ${REPEATS} timed runs per side (CPU ms, min / median); node ${process.version}, numpy ${numpyVersion}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'})`,
  );
  lines.push('');
  lines.push(
    '| estimator | rlvr ms | rlvr tokens/s (min) | NumPy float32 ms | NumPy float64 ms | speed-up vs NumPy f32 (min) | vs NumPy f64 (min) | max weight diff vs NumPy f64 |',
  );
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const name of names) {
    const { min: ms, median: med } = stats(js[name]);
    const result = results[name];
    const ref = new Float64Array(readFileSync(join(dir, `${name}.f64`)).buffer.slice(0));
    let diff = 0;
    for (let t = 0; t < tokens; t++) diff = Math.max(diff, Math.abs(result.weights[t] - ref[t]));
    const f32 = stats(np[name].float32);
    const f64 = stats(np[name].float64);
    const pair = (s) => `${s.min.toFixed(1)} / ${s.median.toFixed(1)}`;
    lines.push(
      `| ${name} | ${pair({ min: ms, median: med })} | ${(tokens / (ms / 1e3) / 1e6).toFixed(1)} M | ${pair(f32)} | ${pair(f64)} | ${(f32.min / ms).toFixed(2)}x | ${(f64.min / ms).toFixed(2)}x | ${diff.toExponential(1)} |`,
    );
  }
  console.log(lines.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
