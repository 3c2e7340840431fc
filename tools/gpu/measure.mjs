// One script for a GPU machine: the WebGPU adapter (and whether NVIDIA's Vulkan driver is visible),
// the policy's forward+backward at the embedded size, at 9M and at the Qwen3-0.6B shape, the fused
// GRAIL pass at 1 x 512 on the 0.6B shape, a training micro-step, and `npm run train` (the embedded
// default, --backend webgpu), each timed on the webgpu backend; beside them PyTorch's eager forward
// and input-gradient backward of the same 0.6B shape on the same GPU (tools/gpu/torch_reference.py,
// when the machine's python3 has torch). Prints a table and writes JSON (--out FILE, default
// $OUT/gpu-measure.json or ./gpu-measure.json). Seconds are medians of 3 runs after one warm-up.
//   node tools/gpu/measure.mjs [--out FILE] [--skip-train] [--skip-torch] [--backend webgpu|cpu|wasm]
// On a machine without a registry: node tools/gpu/pack.mjs here, send tools/gpu/pack, run
// node tools/gpu/pack/measure.mjs there.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { batchFromRows } from '@rlvr/core';
import { Qwen3Model, parameterShapes, parseModelConfig, selectBackend } from '@rlvr/policy';
import { logprobsWithGradXEmb } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import { create } from 'webgpu';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    'skip-train': { type: 'boolean' },
    'skip-torch': { type: 'boolean' },
    backend: { type: 'string', default: 'webgpu' },
  },
});
const here = dirname(new URL(import.meta.url).pathname);
const outFile = values.out ?? join(process.env.OUT ?? '.', 'gpu-measure.json');
const result = { backend: values.backend, adapter: null, nvidiaIcd: null, nvidiaSmi: null, rows: [], torch: null, train: null, errors: [] };
const say = (m) => console.log(m);

// the adapter, and NVIDIA's Vulkan driver (Dawn's route to an NVIDIA GPU on Linux)
const icdDirs = ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d', '/usr/local/share/vulkan/icd.d'];
result.nvidiaIcd = icdDirs.flatMap((d) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : [])).filter((f) => /nvidia/i.test(f));
try {
  result.nvidiaSmi = execFileSync('nvidia-smi', ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'], {
    encoding: 'utf8',
  }).trim();
} catch {
  result.nvidiaSmi = null;
}
try {
  const a = await create([]).requestAdapter({ powerPreference: 'high-performance' });
  result.nativeAdapter = a && {
    vendor: a.info.vendor,
    architecture: a.info.architecture,
    device: a.info.device,
    description: a.info.description,
  };
} catch (e) {
  result.nativeAdapter = `error: ${e.message}`;
}
await selectBackend({ backend: values.backend }, { info: (m) => (result.adapter = m) });
say(
  `${result.adapter}\nNVIDIA Vulkan driver (nvidia_icd.json): ${result.nvidiaIcd.length > 0 ? result.nvidiaIcd.join(', ') : 'not found'}; nvidia-smi: ${result.nvidiaSmi ?? 'absent'}`,
);

/** A Qwen3-shaped model with cheap deterministic weights (a host LCG: drawing 0.6B normals would take minutes). */
function qwen(shape) {
  const config = parseModelConfig({ model_type: 'qwen3', rms_norm_eps: 1e-6, rope_theta: 1e6, tie_word_embeddings: true, ...shape });
  const shapes = parameterShapes(config);
  let x = 12345;
  const m = Qwen3Model.fromWeights(config, (name) => {
    const shape = shapes.get(name);
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('norm.weight')) data.fill(1);
    else
      for (let k = 0; k < data.length; k++) {
        x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
        data[k] = (x / 2 ** 32 - 0.5) * 0.04;
      }
    return { shape, data };
  });
  return m;
}

/** One rollout batch of `B` rows: a prompt of `P` and a completion of `C` tokens, an answer span near the end. */
function batch(V, B, P, C) {
  let x = 7;
  const tok = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x % (V - 1)) + 1;
  };
  const rows = Array.from({ length: B }, (_, i) => ({
    group: 0,
    reward: i % 2,
    prompt: Array.from({ length: P }, tok),
    completion: Array.from({ length: C }, tok),
    spans: { open: [C - 8, C - 7], content: [C - 7, C - 3], close: [C - 3, C - 2] },
  }));
  return batchFromRows(rows);
}

/** Median seconds of 3 runs after one warm-up; `fn` awaits its own reads. */
async function timed(what, fn) {
  try {
    await fn();
    const s = [];
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      await fn();
      s.push((performance.now() - t0) / 1000);
    }
    s.sort((a, b) => a - b);
    const row = { what, seconds: s[1], runs: s, tensorsAlive: tf.memory().numTensors };
    result.rows.push(row);
    say(`${what.padEnd(64)} ${s[1].toFixed(3)} s`);
  } catch (e) {
    result.errors.push({ what, error: String(e.message ?? e).split('\n')[0] });
    say(`${what.padEnd(64)} failed: ${String(e.message ?? e).split('\n')[0]}`);
  }
}

/** Forward + backward of the clipped-surrogate loss over every parameter (Trainer.gradients), grads read back. */
async function forwardBackward(m, b) {
  const rows = Array.from({ length: b.numRollouts }, (_, i) => i);
  const T = b.completionOffsets[b.numRollouts];
  const { grads } = await new Trainer(m, { tokenBudget: 1 << 20 }).gradients(
    b,
    rows,
    new Float32Array(T).fill(0.5),
    new Float32Array(T).fill(-5),
  );
  await Promise.all([...grads.values()].map((g) => g.data()));
  tf.dispose([...grads.values()]);
}

const SHAPES = {
  embedded: {
    vocab_size: 408,
    hidden_size: 96,
    intermediate_size: 256,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 24,
    max_position_embeddings: 1024,
  },
  '9M': {
    vocab_size: 8192,
    hidden_size: 256,
    intermediate_size: 768,
    num_hidden_layers: 8,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 64,
    max_position_embeddings: 1024,
  },
  'qwen3-0.6B': {
    vocab_size: 151936,
    hidden_size: 1024,
    intermediate_size: 3072,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    max_position_embeddings: 4096,
  },
};

for (const [name, shape] of Object.entries(SHAPES)) {
  let m;
  try {
    m = qwen(shape);
  } catch (e) {
    result.errors.push({ what: `load ${name}`, error: String(e.message ?? e).split('\n')[0] });
    say(`load ${name}: ${String(e.message ?? e).split('\n')[0]}`);
    continue;
  }
  const [B, P, C] = name === 'qwen3-0.6B' ? [1, 32, 480] : [8, 32, 96];
  await timed(`forward+backward, ${name} (${m.numParameters().toLocaleString('en')} params), ${B} x ${P + C} tokens`, () =>
    forwardBackward(m, batch(shape.vocab_size, B, P, C)),
  );
  if (name === 'qwen3-0.6B') {
    const b = batch(shape.vocab_size, 1, 32, 480);
    await timed('fused GRAIL pass (logprobsWithGradXEmb), qwen3-0.6B, 1 x 512 tokens', () =>
      logprobsWithGradXEmb(m, b, { tokenBudget: 1 << 20 }),
    );
  }
  if (name === 'embedded') {
    const b = batch(shape.vocab_size, 8, 32, 96);
    const trainer = new Trainer(m, { tokenBudget: 4096 });
    const T = b.completionOffsets[b.numRollouts];
    await timed('training micro-step (Trainer.step, AdamW), embedded, 8 x 128 tokens', () =>
      trainer.step(b, new Float32Array(T).fill(0.5)),
    );
    trainer.optimizer.dispose();
  }
  m.dispose();
}

// PyTorch on the same GPU: eager forward + input-gradient backward of the 0.6B shape at 1 x 512
if (!values['skip-torch']) {
  const r = spawnSync('python3', [join(here, 'torch_reference.py')], { encoding: 'utf8' });
  try {
    result.torch = JSON.parse(r.stdout.trim().split('\n').pop());
    say(
      `PyTorch ${result.torch.torch} on ${result.torch.device}: 0.6B-shape forward + input-gradient backward, 1 x 512: ${result.torch.seconds?.toFixed(3)} s`,
    );
  } catch {
    result.torch = { error: (r.stderr || r.stdout || String(r.error)).trim().split('\n').pop() };
    say(`PyTorch reference: ${result.torch.error}`);
  }
}

// npm run train: the embedded default through the reference trainer's bin, timed once
if (!values['skip-train']) {
  const bin = join(dirname(createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json')), 'bin', 'rlvr.js');
  const out = mkdtempSync(join(tmpdir(), 'rlvr-gpu-train-'));
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, 'train', '--backend', values.backend, '--out', out, '-q', '--json'], { encoding: 'utf8' });
  result.train = {
    seconds: (performance.now() - t0) / 1000,
    code: r.status,
    summary: r.status === 0 ? JSON.parse(r.stdout) : r.stderr.slice(-2000),
  };
  say(`npm run train (rlvr train --backend ${values.backend}): ${result.train.seconds.toFixed(1)} s, exit ${r.status}`);
}

writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
say(`written: ${outFile}`);
