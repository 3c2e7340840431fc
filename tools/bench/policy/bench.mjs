// @rlvr/policy speed: forward+backward tokens/s and KV-cache decode tokens/s of a ~9M-parameter
// Qwen3-architecture config, beside the same model in PyTorch on the CPU (2 threads), same run.
//
//   npx tsc -b packages/policy && node tools/bench/policy/bench.mjs [--backend wasm|cpu|tensorflow]
//        [--steps 3] [--new-tokens 64] [--profile] [--no-torch] [--threads 2] [--workers 2]
//
// --workers N (N > 1) also times the training step on N policy workers (PolicyWorkers: the rows
// split across N worker threads, each with its own backend and replica, gradients summed here in
// worker order, as Trainer.step does), so both cores are used; 1 skips it.
//
// Prints a JSON summary (and, with --profile, where a training step's time goes by kernel).
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { PolicyWorkers, Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import { BENCH_CONFIG } from './config.mjs';
import { randomMicroBatch, summedGrads, tokenLoss } from './loss.mjs';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'wasm' },
    steps: { type: 'string', default: '3' },
    'new-tokens': { type: 'string', default: '64' },
    batch: { type: 'string', default: '16' },
    // Rows per forward/backward pass; gradients are summed over the micro-batches of a step (as a
    // trainer does). The wasm heap (tfjs keeps every forward intermediate until backprop ends)
    // does not hold 16 x 256 tokens of this model in one pass.
    'micro-batch': { type: 'string', default: '4' },
    seq: { type: 'string', default: '256' },
    threads: { type: 'string', default: '2' },
    profile: { type: 'boolean', default: false },
    // Activation checkpointing (recompute each layer in the backward pass): lets a whole batch of
    // 16 x 256 fit the wasm heap in one pass, at the cost of about one extra forward.
    checkpoint: { type: 'boolean', default: false },
    'no-torch': { type: 'boolean', default: false },
    workers: { type: 'string', default: '2' },
  },
});

const uptimeBefore = execFileSync('uptime', { encoding: 'utf8' }).trim();
const B = Number(values.batch);
const T = Number(values.seq);
const steps = Number(values.steps);
const prompt = 16;
const newTokens = Number(values['new-tokens']);
const log = [];
const backend = await selectBackend({ backend: values.backend }, { info: (m) => log.push(m) });
const config = parseModelConfig(BENCH_CONFIG);
const model = Qwen3Model.random(config, 0, 0.02);

const mb = Math.min(B, Number(values['micro-batch']));
const { ids, targets, mask } = randomMicroBatch(tf, config.vocab_size, B, T, 1);
const micro = [];
for (let s = 0; s < B; s += mb)
  micro.push({ ids: tf.slice(ids, [s, 0], [mb, T]), targets: tf.slice(targets, [s, 0], [mb, T]), mask: tf.slice(mask, [s, 0], [mb, T]) });

/** One optimisation step's gradients: sum over micro-batches of d(-mean log p)/d(params). */
function trainStep() {
  const acc = summedGrads(tf, model, micro, tokenLoss(tf, model, B * T, { checkpoint: values.checkpoint }));
  Object.values(acc)[0].dataSync();
  tf.dispose(Object.values(acc));
}

function decode() {
  const pid = tf.randomUniform([B, prompt], 0, config.vocab_size, 'int32', 2);
  const { logits, cache } = model.prefill(pid);
  let tok = tf.argMax(logits, 1);
  logits.dispose();
  pid.dispose();
  const t0 = performance.now();
  for (let s = 0; s < newTokens; s++) {
    const next = tf.tidy(() => tf.argMax(model.decodeStep(cache, tok), 1));
    tok.dispose();
    tok = next;
  }
  tok.dataSync();
  const dt = (performance.now() - t0) / 1000;
  tok.dispose();
  cache.dispose();
  return dt;
}

const cpuSeconds = (c) => (c.user + c.system) / 1e6;
trainStep(); // warm-up (kernel setup, allocation)
const t0 = performance.now();
let c0 = process.cpuUsage();
for (let i = 0; i < steps; i++) trainStep();
const trainS = (performance.now() - t0) / 1000 / steps;
const trainCpu = cpuSeconds(process.cpuUsage(c0)) / steps;
decode(); // warm-up
c0 = process.cpuUsage();
const decodeS = decode();
const decodeCpu = cpuSeconds(process.cpuUsage(c0));

const tfjs = {
  framework: 'tfjs',
  backend,
  parameters: model.numParameters(),
  train_step_s: trainS,
  train_tokens_per_s: (B * T) / trainS,
  train_cpu_s: trainCpu,
  train_tokens_per_cpu_s: (B * T) / trainCpu,
  decode_s: decodeS,
  decode_tokens_per_s: (B * newTokens) / decodeS,
  decode_tokens_per_cpu_s: (B * newTokens) / decodeCpu,
  rss_mb: Math.round(process.memoryUsage().rss / 1e6),
};

/**
 * The same training step on `n` policy workers: publish the weights (free after the first step:
 * nothing changes them), each worker runs `train-share.mjs` on its rows, and the gradients are
 * read from the shared buffers and summed here in worker order. Returns seconds per step, CPU
 * seconds per step (main thread and workers: process-wide), and the reduce's seconds per step.
 */
async function workersTrain(n) {
  const engine = await PolicyWorkers.start(model, { workers: n, backend });
  const taskUrl = new URL('./train-share.mjs', import.meta.url).href;
  const per = Math.ceil(B / n);
  const inputs = Array.from({ length: n }, (_, w) => ({
    rows: Math.max(0, Math.min(per, B - w * per)),
    batch: B,
    seq: T,
    microBatch: mb,
    seed: 1000 * (w + 1),
  }));
  let reduceS = 0;
  const step = async () => {
    await engine.publish(model);
    const results = await engine.run(taskUrl, 'trainShare', inputs);
    const r0 = performance.now();
    for (const slot of engine.layout.slots) {
      let acc;
      for (let w = 0; w < n; w++) {
        if (!results[w].present.includes(slot.name)) continue;
        const t = tf.tensor(engine.gradients(w).slice(slot.offset, slot.offset + slot.size), slot.shape, 'float32');
        if (acc === undefined) acc = t;
        else {
          const sum = tf.add(acc, t);
          tf.dispose([acc, t]);
          acc = sum;
        }
      }
      acc?.dataSync();
      acc?.dispose();
    }
    reduceS += (performance.now() - r0) / 1000;
  };
  try {
    await step(); // warm-up (each worker's kernels, the first publish)
    reduceS = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await step();
    return {
      step_s: (performance.now() - t0) / 1000 / steps,
      cpu_s: cpuSeconds(process.cpuUsage(c0)) / steps,
      reduce_s: reduceS / steps,
    };
  } finally {
    await engine.close();
  }
}

const nWorkers = Number(values.workers);
if (nWorkers > 1) {
  const w = await workersTrain(nWorkers);
  tfjs.workers = nWorkers;
  tfjs.workers_train_step_s = w.step_s;
  tfjs.workers_train_tokens_per_s = (B * T) / w.step_s;
  tfjs.workers_train_tokens_per_cpu_s = (B * T) / w.cpu_s;
  tfjs.workers_grad_reduce_s = w.reduce_s;
  tfjs.workers_speedup_vs_one_thread = +(trainS / w.step_s).toFixed(3);
}

let profile;
if (values.profile) {
  const p = await tf.profile(() => trainStep());
  const byKernel = new Map();
  const byMatmul = new Map();
  let total = 0;
  for (const k of p.kernels) {
    const ms = Number(k.kernelTimeMs) || 0;
    total += ms;
    const e = byKernel.get(k.name) ?? { count: 0, ms: 0 };
    e.count++;
    e.ms += ms;
    byKernel.set(k.name, e);
    if (k.name === 'BatchMatMul' || k.name === '_FusedMatMul') {
      const key = k.inputShapes.map((s) => `[${s}]`).join(' x ') + ` ${JSON.stringify(k.extraInfo ?? '')}`;
      const m = byMatmul.get(key) ?? { count: 0, ms: 0 };
      m.count++;
      m.ms += ms;
      byMatmul.set(key, m);
    }
  }
  const top = (m, n) =>
    [...m]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, n)
      .map(([name, e]) => ({ name, count: e.count, ms: Math.round(e.ms), share: +(e.ms / total).toFixed(3) }));
  profile = { kernels: p.kernels.length, kernel_ms: Math.round(total), by_kernel: top(byKernel, 15), matmul_shapes: top(byMatmul, 12) };
}

let torch;
if (!values['no-torch']) {
  const script = fileURLToPath(new URL('./bench_torch.py', import.meta.url));
  const arg = JSON.stringify({
    config: BENCH_CONFIG,
    batch: B,
    seq: T,
    train_steps: steps,
    prompt,
    new_tokens: newTokens,
    threads: Number(values.threads),
  });
  const r = spawnSync('/usr/bin/python3', [script, arg], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`PyTorch bench failed: ${r.stderr}`);
  torch = JSON.parse(r.stdout.trim().split('\n').pop());
}

const summary = {
  config: `hidden ${config.hidden_size}, ${config.num_hidden_layers} layers, ${config.num_attention_heads} heads (${config.num_key_value_heads} KV), vocab ${config.vocab_size}, ${(tfjs.parameters / 1e6).toFixed(2)}M params`,
  train: `batch ${B} x ${T} tokens (${B / mb} micro-batches of ${mb}${values.checkpoint ? ', activation checkpointing' : ''}), forward + backward (mean token log-prob loss, all parameter gradients)`,
  decode: `batch ${B}, prompt ${prompt}, ${newTokens} greedy steps with KV cache`,
  log,
  tfjs,
  torch,
  ratio_vs_torch: torch && {
    train_wall: +(tfjs.train_tokens_per_s / torch.train_tokens_per_s).toFixed(3),
    ...(tfjs.workers === undefined
      ? {}
      : { [`train_wall_${tfjs.workers}_workers`]: +(tfjs.workers_train_tokens_per_s / torch.train_tokens_per_s).toFixed(3) }),
    decode_wall: +(tfjs.decode_tokens_per_s / torch.decode_tokens_per_s).toFixed(3),
    train_per_cpu_second: +(tfjs.train_tokens_per_cpu_s / torch.train_tokens_per_cpu_s).toFixed(3),
    decode_per_cpu_second: +(tfjs.decode_tokens_per_cpu_s / torch.decode_tokens_per_cpu_s).toFixed(3),
  },
  load: (await import('node:os')).loadavg(),
  uptime_before: uptimeBefore,
  uptime_after: execFileSync('uptime', { encoding: 'utf8' }).trim(),
  profile,
};
console.log(JSON.stringify(summary, null, 2));
model.dispose();
