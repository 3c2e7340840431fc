// The cost curve as the model grows: for Qwen3-shaped random checkpoints (the embedded 344k model,
// the 9M bench model, Qwen3-0.6B), written as BF16 safetensors in the Hugging Face layout, measure
// load time and RSS, prefill and KV decode tokens/s, one fused GRAIL pass (4 x 512 tokens), one
// training micro-step, the peak RSS of each, and what fits in 24 GiB.
//
//   npx tsc -b packages/trainer packages/saliency && node tools/bench/scale/bench.mjs
//        [--shapes 344k,9m,0.6b] [--phases load,decode,grail,train] [--backend wasm]
//        [--fallback-backend cpu|none] [--dir SCRATCH] [--out results.json] [--full]
//
// Each phase runs in its own process (phase.mjs) so its peak RSS is its own. A phase that fails on
// --backend (wasm's heap is 4 GiB: 0.6B's training state is not) is recorded with its error and,
// with --fallback-backend cpu (the default), a training step is run again on tfjs's plain-JS cpu backend when the
// machine has the memory. Prints `uptime` before and after, and one JSON summary; wall and CPU
// seconds side by side (wall time counts waiting for a core on a shared machine).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { modelDims, parseModelConfig } from '@rlvr/policy';
import { writeRandomCheckpoint } from './checkpoint.mjs';
import { parseShapes, SHAPES } from './shapes.mjs';

const { values } = parseArgs({
  options: {
    shapes: { type: 'string', default: '344k,9m,0.6b' },
    phases: { type: 'string', default: 'load,decode,grail,train' },
    backend: { type: 'string', default: 'wasm' },
    'fallback-backend': { type: 'string', default: 'cpu' },
    dir: { type: 'string', default: join(tmpdir(), 'rlvr-scale') },
    out: { type: 'string' },
    // every shape at the 9M model's sizes (0.6B too: 4 x 512 in one fused pass, 2 x 128 training
    // tokens): for a machine where 0.6B is not bound by wasm's heap and speed (a GPU)
    full: { type: 'boolean', default: false },
  },
});
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const GiB = 2 ** 30;
const PHASE = fileURLToPath(new URL('./phase.mjs', import.meta.url));

/**
 * Sizes per shape. The 344k model's context is 256 tokens, so its GRAIL pass is 8 x 256 (the same
 * 2,048 tokens). 0.6B: decoding from 4 x 32-token prompts; the fused pass one row per forward
 * (token budget 512), and if wasm's heap does not hold that, the next smaller size on the list
 * (each a measured figure at its size); a training micro-batch of 1 x 32 tokens, because its
 * training state (16 bytes a parameter: 9.5 GB) only fits the cpu backend (~0.5 GFLOP/s).
 */
const SIZES = {
  '344k': {
    decode: { rows: 4, prompt: 64 },
    grail: [{ rows: 8, seq: 256, budget: 2048 }],
    train: { rows: 2, seq: 128, prompt: 16, budget: 256 },
  },
  '9m': {
    decode: { rows: 4, prompt: 64 },
    grail: [{ rows: 4, seq: 512, budget: 2048 }],
    train: { rows: 2, seq: 128, prompt: 16, budget: 256 },
  },
  '0.6b': {
    decode: { rows: 4, prompt: 32 },
    grail: [
      { rows: 4, seq: 512, budget: 512 },
      { rows: 4, seq: 256, budget: 256 },
      { rows: 4, seq: 128, budget: 128 },
    ],
    train: { rows: 1, seq: 32, prompt: 8, budget: 32 },
  },
};
const WASM_HEAP = 4 * 2 ** 30;
if (values.full) SIZES['0.6b'] = SIZES['9m'];

function phaseArgs(shape, phase, attempt = 0) {
  const z = phase === 'grail' ? SIZES[shape].grail[attempt] : SIZES[shape][phase];
  if (phase === 'decode') return ['--rows', z.rows, '--prompt', z.prompt, '--new-tokens', 16];
  if (phase === 'grail') return ['--rows', z.rows, '--seq', z.seq, '--prompt', 32, '--token-budget', z.budget];
  if (phase === 'train') return ['--rows', z.rows, '--seq', z.seq, '--prompt', z.prompt, '--token-budget', z.budget];
  return [];
}

function runPhase(dir, shape, phase, backend, attempt = 0) {
  const args = [PHASE, '--dir', dir, '--phase', phase, '--backend', backend, ...phaseArgs(shape, phase, attempt).map(String)];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const line = r.stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (line) return JSON.parse(line);
  // killed (out of memory) or crashed before printing
  return {
    phase,
    backend,
    ok: false,
    error: `exit ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ').slice(0, 400)}`,
  };
}

const memAvailable = () => Number(/MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))[1]) * 1024;

/** What fits in `budget` bytes, from the measured peaks (fp32 weights; AdamW's two moments). */
function whatFits(shape, P, results, budget) {
  const d = modelDims(parseModelConfig(SHAPES[shape]));
  const base = (results.load?.load?.rss_before_mb ?? 120) * 2 ** 20; // Node + tfjs before any weight
  const weights = 4 * P;
  const kvPerToken = 2 * d.L * d.KV * d.hd * 4;
  const out = {
    budget_gib: budget / GiB,
    weights_gib: weights / GiB,
    inference_kv_cache_tokens: Math.max(0, Math.floor((budget - base - weights) / kvPerToken)),
    kv_bytes_per_token: kvPerToken,
  };
  const g = results.grail?.grail;
  if (g) {
    const tok = Math.min(g.token_budget, g.tokens);
    const perToken = (g.tf_peak_bytes - g.tf_bytes_before) / tok;
    out.grail_bytes_per_token = Math.round(perToken);
    out.grail_max_token_budget = Math.max(0, Math.floor((budget - base - weights) / perToken));
  }
  const t = results.train?.train;
  const state = 16 * P; // weights, gradients, AdamW m and v (float32)
  out.training_state_gib = state / GiB;
  if (t) {
    const optTransient = Math.max(0, t.adamw.tf_peak_bytes - state);
    out.adamw_transient_gib = optTransient / GiB;
    out.train_activation_bytes_per_token = Math.round(t.activation_bytes_per_token);
    const room = budget - base - state;
    out.train_fits = room > optTransient;
    out.train_max_micro_batch_tokens = room > optTransient ? Math.floor(room / t.activation_bytes_per_token) : 0;
  }
  return out;
}

console.log(`uptime before: ${uptime()}`);
const t0 = performance.now();
const shapes = parseShapes(values.shapes);
const phases = values.phases.split(',');
const summary = {
  command: `node tools/bench/scale/bench.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  uptime_before: uptime(),
  shapes: {},
};
for (const shape of shapes) {
  const dir = join(values.dir, shape);
  const ckpt = writeRandomCheckpoint(shape, dir, { tokenizer: shape === '0.6b' });
  const entry = { checkpoint: ckpt, sizes: SIZES[shape], results: {} };
  summary.shapes[shape] = entry;
  for (const phase of phases) {
    const wall0 = performance.now();
    let r;
    if (phase === 'train' && values.backend === 'wasm' && 8 * ckpt.parameters > WASM_HEAP) {
      // not attempted: weights and gradients alone are more than the heap can hold
      r = {
        ok: false,
        backend: 'wasm',
        error: `not run on wasm: weights + gradients = ${((8 * ckpt.parameters) / GiB).toFixed(1)} GiB > the 4 GiB wasm heap`,
      };
    } else r = runPhase(dir, shape, phase, values.backend);
    // the fused pass: smaller sizes on the same backend when the first does not fit
    const failedSizes = [];
    for (let a = 1; phase === 'grail' && !r.ok && a < SIZES[shape].grail.length; a++) {
      failedSizes.push({ size: SIZES[shape].grail[a - 1], error: r.error, peak_rss_mb: r.peak_rss_mb });
      r = runPhase(dir, shape, phase, values.backend, a);
    }
    if (failedSizes.length > 0) r.failed_sizes = failedSizes;
    if (phase === 'train' && !r.ok && values['fallback-backend'] !== 'none' && values['fallback-backend'] !== values.backend) {
      const need = 20 * ckpt.parameters + 2 * GiB;
      const failed = { backend: r.backend ?? values.backend, error: r.error, peak_rss_mb: r.peak_rss_mb };
      if (memAvailable() < need)
        r = { ...r, fallback_skipped: `needs ~${(need / GiB).toFixed(1)} GiB, ${(memAvailable() / GiB).toFixed(1)} GiB available` };
      else r = { ...runPhase(dir, shape, phase, values['fallback-backend']), failed_first: failed };
    }
    r.wall_s = (performance.now() - wall0) / 1000;
    entry.results[phase] = r;
    console.error(
      `${shape} ${phase}: ${r.ok ? 'ok' : 'FAILED ' + r.error} (${r.backend}, ${r.wall_s.toFixed(1)} s wall, ${r.process?.cpu_s?.toFixed(1)} s CPU, peak RSS ${r.peak_rss_mb} MB)`,
    );
  }
  const P = ckpt.parameters;
  entry.parameters = P;
  entry.fit_24gib = whatFits(shape, P, entry.results, 24 * GiB);
  entry.fit_wasm_4gib = whatFits(shape, P, entry.results, 4 * GiB);
}
summary.total_wall_s = (performance.now() - t0) / 1000;
summary.uptime_after = uptime();
const json = JSON.stringify(summary, null, 2);
if (values.out) writeFileSync(values.out, json + '\n');
console.log(json);
console.log(`uptime after: ${summary.uptime_after}`);
