// What the saliency benchmarks share: the flags, `uptime`, the backend, the benchmark model of
// @rlvr/policy (random, seed 0) and a batch of B rollouts of P prompt + C completion tokens in
// groups of 8 whose boxed answer sits 20 tokens before the end.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { batchFromRows } from '@rlvr/core';
import { Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import { BENCH_CONFIG } from '../policy/config.mjs';

export const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

/** Parse the shared flags, print `uptime`, start the backend, build the model and the batch. */
export async function setup() {
  const { values } = parseArgs({
    options: {
      backend: { type: 'string', default: 'wasm' },
      steps: { type: 'string', default: '2' },
      batch: { type: 'string', default: '16' },
      seq: { type: 'string', default: '256' },
      prompt: { type: 'string', default: '32' },
      // Rows per forward/backward pass (wasm's 4 GB heap does not hold the 16 x 256 backward
      // tape in one go); the same micro-batches as tools/bench/policy.
      'micro-batch': { type: 'string', default: '4' },
    },
  });
  console.log(`uptime before: ${uptime()}`);
  const B = Number(values.batch);
  const S = Number(values.seq);
  const P = Number(values.prompt);
  const C = S - P;
  const log = [];
  const backend = await selectBackend({ backend: values.backend }, { info: (m) => log.push(m) });
  const config = parseModelConfig(BENCH_CONFIG);
  const model = Qwen3Model.random(config, 0, 0.02);
  let seed = 1;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const tok = (n) => Array.from({ length: n }, () => 3 + Math.floor(rand() * (config.vocab_size - 3)));
  const batch = batchFromRows(
    Array.from({ length: B }, (_, i) => ({
      group: Math.floor(i / 8),
      reward: i % 2,
      prompt: tok(P),
      completion: tok(C),
      spans: { open: [C - 20, C - 17], content: [C - 17, C - 12], close: [C - 12, C - 11] },
    })),
  );
  const mb = Math.min(B, Number(values['micro-batch']));
  return { B, S, P, C, mb, steps: Number(values.steps), backend, log, config, model, batch };
}

/** Mean wall and CPU seconds per call of each case (awaited) over `steps` calls after one warm-up, and tensors leaked. */
export async function timeCases(cases, steps, tf) {
  const seconds = {};
  const cpuSeconds = {};
  const leaks = {};
  for (const [name, fn] of Object.entries(cases)) {
    await fn(); // warm-up (kernel setup, allocation)
    const before = tf.memory().numTensors;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < steps; i++) await fn();
    const c = process.cpuUsage(c0);
    seconds[name] = (performance.now() - t0) / 1000 / steps;
    // CPU time of this process: less disturbed than wall time on a shared machine (the wasm
    // backend runs on one thread, so on a quiet machine the two agree).
    cpuSeconds[name] = (c.user + c.system) / 1e6 / steps;
    leaks[name] = tf.memory().numTensors - before;
  }
  return { seconds, cpuSeconds, leaks };
}

/**
 * Print the JSON summary of an update-cost benchmark, `head` first, then wall and CPU seconds of each
 * case, each case's ratio to `base` in the same process, and tensors leaked; then `uptime`.
 */
export function printRatios(head, { seconds, cpuSeconds, leaks }, base) {
  const r = (x) => Math.round(x * 1000) / 1000;
  const ratios = (t) => Object.fromEntries(Object.keys(t).map((k) => [`${k}/${base}`, r(t[k] / t[base])]));
  const rounded = (t) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, r(v)]));
  console.log(
    JSON.stringify(
      {
        ...head,
        seconds: rounded(seconds),
        cpu_seconds: rounded(cpuSeconds),
        ratios_wall: ratios(seconds),
        ratios_cpu: ratios(cpuSeconds),
        leaked_tensors: leaks,
      },
      null,
      2,
    ),
  );
  console.log(`uptime after: ${uptime()}`);
}
