// @rlvr/rollout generation speed: tokens/s of the in-process policy sampler with the KV cache and
// without it (the recompute twin: a full forward over the whole sequence for every new token),
// beside the same model generating with a KV cache in PyTorch on the CPU (2 threads), same run.
// Model: the @rlvr/policy bench config (hidden 256, 6 layers, 8 heads / 4 KV, vocab 4096, random
// weights), batch 16 (one prompt, n = 16), a 16-token prompt, 256 new tokens, no EOS.
//
//   npx tsc -b packages/rollout && node tools/bench/rollout/bench.mjs [--backend wasm|cpu|tensorflow]
//        [--batch 16] [--new-tokens 256] [--no-cache-tokens 16] [--rounds 2] [--no-torch] [--threads 2]
//
// tfjs and PyTorch alternate, mode by mode, for --rounds rounds (so both meet the same load);
// each mode's fastest round is compared (the least disturbed one), all rounds are printed.
//
// The recompute twin at 256 new tokens would run for many minutes here (step t is a forward over
// 16 x (16 + t) tokens), so its time at --new-tokens is ESTIMATED: one recompute step (forward
// over [B, L], last-column logits to the host, one token picked per row) is timed at 9 lengths
// L from 16 to 16 + 255, and the 256 steps are summed with linear interpolation between them.
// The real recompute sampler runs for --no-cache-tokens tokens to check the estimate (both
// printed). Wall-clock and process CPU time are both reported (per CPU-second is the fairer
// comparison on a loaded machine: tfjs wasm uses one thread, PyTorch two). Prints a JSON summary.
// Timings on a shared machine are noisy.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { Qwen3Model, parseModelConfig, selectBackend, prunedTokenizer } from '@rlvr/policy';
import { pickToken, policySampler } from '@rlvr/rollout';
import { Rng } from '@rlvr/core';
import { BENCH_CONFIG } from '../policy/config.mjs';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'wasm' },
    batch: { type: 'string', default: '16' },
    prompt: { type: 'string', default: '16' },
    'new-tokens': { type: 'string', default: '256' },
    'no-cache-tokens': { type: 'string', default: '16' },
    threads: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    'no-torch': { type: 'boolean', default: false },
  },
});

const B = Number(values.batch);
const P = Number(values.prompt);
const N = Number(values['new-tokens']);
const NC = Number(values['no-cache-tokens'] ?? 16);
const log = [];
const backend = await selectBackend({ backend: values.backend }, { info: (m) => log.push(m) });
const model = Qwen3Model.random(parseModelConfig(BENCH_CONFIG), 0, 0.02);
// A tokenizer is needed for stop strings and text; any 4096-id byte-level vocabulary does (gpt2's first 4096 ranks).
const tokenizer = prunedTokenizer({
  format: 'rlvr-pruned-tiktoken/1',
  base: 'gpt2',
  ids: Array.from({ length: 4096 }, (_, i) => i),
  special: {},
});
const prompt = Array.from({ length: P }, (_, i) => (i * 797 + 13) % 4096);

async function run(kvCache, temperature, newTokens, warmUp = false) {
  const sampler = policySampler(model, tokenizer, { kvCache, batchSize: B, eosTokenIds: [] });
  const req = [{ prompt: { tokens: prompt }, n: B, params: { temperature, topP: 1, topK: 0, maxNewTokens: newTokens, stop: [], seed: 1 } }];
  const before = tf.memory().numTensors;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const out = await sampler.sample(req);
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  const tokens = out[0].completions.reduce((n, c) => n + c.tokens.length, 0);
  if (tokens !== B * newTokens) throw new Error(`expected ${B * newTokens} tokens, got ${tokens}`);
  // (the warm-up run creates the model's cached transposed weights, which stay)
  if (!warmUp && tf.memory().numTensors !== before) throw new Error(`tensor leak: ${tf.memory().numTensors - before} tensors`);
  return {
    kv_cache: kvCache,
    temperature,
    new_tokens: newTokens,
    seconds: +s.toFixed(3),
    tokens_per_s: +(tokens / s).toFixed(1),
    cpu_seconds: +cpu.toFixed(3),
    tokens_per_cpu_s: +(tokens / cpu).toFixed(1),
  };
}

/** Seconds of one recompute step at sequence length L: the twin's forward, logits to the host, a pick per row. */
async function recomputeStep(L) {
  const ids = tf.tensor2d(
    Int32Array.from({ length: B * L }, (_, i) => (i * 31 + 7) % 4096),
    [B, L],
    'int32',
  );
  const mask = tf.ones([B, L], 'int32');
  const rng = new Rng(1);
  const t0 = performance.now();
  const logits = tf.tidy(() => {
    const h = model.hidden({ ids, attentionMask: mask });
    return tf.reshape(model.project(tf.slice(h, [0, L - 1, 0], [B, 1, model.dims.D])), [B, model.dims.V]);
  });
  const host = await logits.data();
  for (let b = 0; b < B; b++) pickToken(host.subarray(b * 4096, (b + 1) * 4096), { temperature: 1, topK: 0, topP: 1 }, rng);
  const s = (performance.now() - t0) / 1000;
  tf.dispose([ids, mask, logits]);
  return s;
}

/** Sum of the step times for steps 0..n-1 (length P + t), interpolating linearly between grid points. */
function integrate(grid, n) {
  let total = 0;
  for (let t = 0; t < n; t++) {
    let k = 0;
    while (k + 2 < grid.length && grid[k + 1].t < t) k++;
    const [a, b] = [grid[k], grid[k + 1]];
    total += a.s + ((b.s - a.s) * (t - a.t)) / (b.t - a.t);
  }
  return total;
}

function torchRun(mode) {
  const script = fileURLToPath(new URL('./generate_torch.py', import.meta.url));
  const arg = JSON.stringify({ config: BENCH_CONFIG, batch: B, prompt: P, new_tokens: N, threads: Number(values.threads), modes: [mode] });
  const r = spawnSync('/usr/bin/python3', [script, arg], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`PyTorch bench failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  torchInfo = { framework: out.framework, version: out.version, threads: out.threads };
  return out[mode];
}
let torchInfo;

await run(true, 1, 8, true); // warm-up: kernels, allocation
await run(false, 1, 2, true);
const rounds = { tfjs_sampled: [], tfjs_greedy: [], torch_sampled: [], torch_greedy: [] };
for (let r = 0; r < Number(values.rounds); r++) {
  rounds.tfjs_sampled.push(await run(true, 1, N));
  if (!values['no-torch']) rounds.torch_sampled.push(torchRun('sampled'));
  rounds.tfjs_greedy.push(await run(true, 0, N));
  if (!values['no-torch']) rounds.torch_greedy.push(torchRun('greedy'));
}
const best = (xs) => xs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
const cached = best(rounds.tfjs_sampled);
const cachedGreedy = best(rounds.tfjs_greedy);
const recomputeMeasured = await run(false, 1, NC);
const grid = [];
for (const t of [0, 32, 64, 96, 128, 160, 192, 224, N - 1].filter((t) => t < N))
  grid.push({ t, L: P + t, s: +(await recomputeStep(P + t)).toFixed(3) });
const estimated = integrate(grid, N);
const recompute = {
  kv_cache: false,
  temperature: 1,
  new_tokens: N,
  estimated_seconds: +estimated.toFixed(1),
  tokens_per_s: +((B * N) / estimated).toFixed(1),
  step_seconds_by_length: grid.map((g) => [g.L, g.s]),
  check: { new_tokens: NC, measured_seconds: recomputeMeasured.seconds, estimated_seconds: +integrate(grid, NC).toFixed(3) },
};

const torch = values['no-torch'] ? undefined : { ...torchInfo, sampled: best(rounds.torch_sampled), greedy: best(rounds.torch_greedy) };

const summary = {
  config: `hidden ${BENCH_CONFIG.hidden_size}, ${BENCH_CONFIG.num_hidden_layers} layers, ${BENCH_CONFIG.num_attention_heads} heads (${BENCH_CONFIG.num_key_value_heads} KV), vocab ${BENCH_CONFIG.vocab_size}, ${(model.numParameters() / 1e6).toFixed(2)}M params`,
  generation: `batch ${B}, prompt ${P}, ${N} new tokens, no EOS; times include prefill and host-side sampling; recompute at ${N} estimated from timed steps (check: measured vs estimated at ${NC})`,
  log,
  backend,
  tfjs: { cached_sampled: cached, cached_greedy: cachedGreedy, recompute_sampled_estimated: recompute },
  torch,
  rounds: Object.fromEntries(Object.entries(rounds).map(([k, xs]) => [k, xs.map((x) => [x.seconds, x.cpu_seconds])])),
  ratios: {
    kv_cache_vs_recompute: +(cached.tokens_per_s / recompute.tokens_per_s).toFixed(2),
    ...(torch
      ? {
          sampled_vs_torch: +(cached.tokens_per_s / torch.sampled.tokens_per_s).toFixed(3),
          greedy_vs_torch: +(cachedGreedy.tokens_per_s / torch.greedy.tokens_per_s).toFixed(3),
          sampled_vs_torch_per_cpu_s: +(cached.tokens_per_cpu_s / torch.sampled.tokens_per_cpu_s).toFixed(3),
          greedy_vs_torch_per_cpu_s: +(cachedGreedy.tokens_per_cpu_s / torch.greedy.tokens_per_cpu_s).toFixed(3),
        }
      : {}),
  },
};
console.log(JSON.stringify(summary, null, 2));
model.dispose();
tokenizer.free();
