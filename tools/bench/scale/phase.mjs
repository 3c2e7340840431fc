// One phase of the scale benchmark in a fresh process, so that its peak RSS is its own (bench.mjs
// runs this once per shape and phase; run it by hand to look at one):
//
//   node tools/bench/scale/phase.mjs --dir DIR --phase load|decode|grail|train [--backend wasm]
//        [--rows 4 --prompt 64 --new-tokens 16]            (decode)
//        [--rows 4 --seq 512 --token-budget 2048]          (grail: 4 x 512, prompt 32)
//        [--rows 2 --seq 128 --token-budget 256]           (train: one micro-batch, prompt 16)
//
// Prints one JSON line: load time and RSS, the phase's figures, its peak RSS (VmHWM, reset after
// the load through /proc/self/clear_refs) and for grail/train tfjs's own accounting (`tf.profile`:
// peak bytes held by live tensors, the largest tensor a kernel produced).
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { batchFromRows, Rng } from '@rlvr/core';
import { batchLogprobs, loadModel, selectBackend } from '@rlvr/policy';
import { logprobsWithGradXEmb } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    phase: { type: 'string', default: 'load' },
    backend: { type: 'string', default: 'wasm' },
    rows: { type: 'string' },
    prompt: { type: 'string' },
    seq: { type: 'string' },
    'new-tokens': { type: 'string', default: '16' },
    'token-budget': { type: 'string' },
  },
});
const num = (v, d) => (v === undefined ? d : Number(v));
const mb = (bytes) => Math.round(bytes / 2 ** 20);
const status = () =>
  Object.fromEntries(
    readFileSync('/proc/self/status', 'utf8')
      .split('\n')
      .filter((l) => /^Vm(RSS|HWM)/.test(l))
      .map((l) => [l.split(':')[0], Number(l.split(/\s+/)[1]) * 1024]),
  );
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};
/** Wall and CPU seconds of fn(). */
async function timed(fn) {
  const t0 = performance.now();
  const c0 = cpu();
  const value = await fn();
  return { value, s: (performance.now() - t0) / 1000, cpu_s: cpu() - c0 };
}
/** Run fn under tf.profile: peak bytes of live tensors (absolute), bytes before, largest kernel output. */
async function profiled(fn) {
  const before = tf.memory().numBytes;
  let result;
  let t;
  const info = await tf.profile(async () => {
    t = await timed(async () => (result = await fn()));
  });
  let largest = { elements: 0, kernel: '', shape: [] };
  for (const k of info.kernels)
    for (const s of k.outputShapes) {
      const n = s.reduce((a, b) => a * b, 1);
      if (n > largest.elements) largest = { elements: n, kernel: k.name, shape: s };
    }
  return {
    result,
    s: t.s,
    cpu_s: t.cpu_s,
    tf_bytes_before_mb: mb(before),
    tf_peak_mb: mb(info.peakBytes),
    tf_peak_bytes: info.peakBytes,
    tf_bytes_before: before,
    kernels: info.kernels.length,
    largest_tensor: largest,
  };
}

const out = { phase: values.phase, backend: null, log: [] };
const wall0 = performance.now();
const rssStart = status().VmRSS;
// tf.profile would otherwise read back every kernel's output to look for NaN.
tf.env().set('CHECK_COMPUTATION_FOR_ERRORS', false);
out.backend = await selectBackend({ backend: values.backend }, { info: (m) => out.log.push(m) });
const c0 = cpu();
const t0 = performance.now();
const model = loadModel(values.dir);
out.load = {
  s: (performance.now() - t0) / 1000,
  cpu_s: cpu() - c0,
  rss_before_mb: mb(rssStart),
  rss_after_mb: mb(status().VmRSS),
  peak_rss_mb: mb(status().VmHWM),
  tf_bytes_mb: mb(tf.memory().numBytes),
};
const P = model.numParameters();
const { vocab_size: V } = model.config;
out.parameters = P;
const rng = new Rng(1);
const tokens = (n) => Array.from({ length: n }, () => rng.int(V));
writeFileSync('/proc/self/clear_refs', '5'); // VmHWM := VmRSS: the peak below is the phase's

/** Rollout rows of P prompt + C completion random tokens, the boxed answer's 11 tokens 20 before the end. */
function batchOf(rows, prompt, seq) {
  const C = seq - prompt;
  return batchFromRows(
    Array.from({ length: rows }, (_, i) => ({
      group: Math.floor(i / 2),
      reward: i % 2,
      prompt: tokens(prompt),
      completion: tokens(C),
      spans: { open: [C - 20, C - 17], content: [C - 17, C - 12], close: [C - 12, C - 11] },
    })),
  );
}

try {
  if (values.phase === 'decode') {
    const B = num(values.rows, 4);
    const Tp = num(values.prompt, 64);
    const N = num(values['new-tokens'], 16);
    const run = async (b, tp, n) => {
      const ids = tf.tensor2d(tokens(b * tp), [b, tp], 'int32');
      const pre = await timed(async () => {
        const r = model.prefill(ids);
        await r.logits.data();
        return r;
      });
      const { logits, cache } = pre.value;
      let tok = tf.argMax(logits, 1);
      tf.dispose([logits, ids]);
      const dec = await timed(async () => {
        for (let s = 0; s < n; s++) {
          const next = tf.tidy(() => tf.argMax(model.decodeStep(cache, tok), 1));
          tok.dispose();
          tok = next;
        }
        await tok.data();
      });
      tok.dispose();
      cache.dispose();
      return { pre, dec };
    };
    await run(1, 4, 1); // warm-up: kernel setup at a tiny size
    const { pre, dec } = await run(B, Tp, N);
    out.decode = {
      what: `prefill ${B} x ${Tp} tokens, then ${N} greedy KV-cache steps of ${B} rows`,
      prefill_s: pre.s,
      prefill_cpu_s: pre.cpu_s,
      prefill_tokens_per_s: (B * Tp) / pre.s,
      prefill_tokens_per_cpu_s: (B * Tp) / pre.cpu_s,
      decode_s: dec.s,
      decode_cpu_s: dec.cpu_s,
      decode_tokens_per_s: (B * N) / dec.s,
      decode_tokens_per_cpu_s: (B * N) / dec.cpu_s,
    };
  } else if (values.phase === 'grail') {
    const B = num(values.rows, 4);
    const S = num(values.seq, 512);
    const Tp = num(values.prompt, 32);
    const tokenBudget = num(values['token-budget'], B * S);
    await logprobsWithGradXEmb(model, batchOf(1, 8, 40), { tokenBudget: 40 }); // warm-up
    const batch = batchOf(B, Tp, S);
    const p = await profiled(() => logprobsWithGradXEmb(model, batch, { tokenBudget }));
    const { result, ...rest } = p;
    out.grail = {
      what: `fused log-probs + GRAIL input-gradient pass (logprobsWithGradXEmb), ${B} x ${S} tokens (prompt ${Tp}), token budget ${tokenBudget}`,
      tokens: B * S,
      token_budget: tokenBudget,
      tokens_per_s: (B * S) / p.s,
      tokens_per_cpu_s: (B * S) / p.cpu_s,
      finite_scores: Number.isFinite(result.scores.reduce((a, b) => a + b, 0)),
      ...rest,
    };
  } else if (values.phase === 'train') {
    const B = num(values.rows, 2);
    const S = num(values.seq, 128);
    const Tp = num(values.prompt, 16);
    const tokenBudget = num(values['token-budget'], B * S);
    const batch = batchOf(B, Tp, S);
    const adv = Float32Array.from({ length: batch.completionTokens.length }, (_, i) => (i % 7) / 7 - 0.4);
    const trainer = new Trainer(model, { tokenBudget, maxGradNorm: 1, optimizer: { weightDecay: 0.01 } });
    const rows = [...Array(B).keys()];
    const oldT = await timed(async () => (await batchLogprobs(model, batch, { tokenBudget })).logprobs);
    // (1) forward + backward of one micro-batch: gradients of the clipped surrogate for every parameter
    const fb = await profiled(() => trainer.gradients(batch, rows, adv, oldT.value));
    const { grads } = fb.result;
    // (2) the optimizer update with those gradients (AdamW allocates its moments on the first call)
    const opt = await profiled(() => trainer.optimizer.apply(model.params, grads, 1e-6));
    for (const g of grads.values()) g.dispose();
    delete fb.result;
    delete opt.result;
    out.train = {
      what: `one micro-batch of ${B} x ${S} tokens (prompt ${Tp}) under token budget ${tokenBudget}: old log-probs (forward), then Trainer.gradients (forward + backward, every parameter), then AdamW.apply`,
      tokens: B * S,
      old_logprobs: { s: oldT.s, cpu_s: oldT.cpu_s },
      forward_backward: { ...fb, tokens_per_s: (B * S) / fb.s, tokens_per_cpu_s: (B * S) / fb.cpu_s },
      adamw: opt,
      micro_step_s: oldT.s + fb.s + opt.s,
      micro_step_cpu_s: oldT.cpu_s + fb.cpu_s + opt.cpu_s,
      // Bytes of the tape and temporaries above weights + gradients at the backward's peak, per token.
      activation_bytes_per_token: Math.max(0, fb.tf_peak_bytes - fb.tf_bytes_before - 4 * P) / (B * S),
    };
  } else if (values.phase !== 'load') throw new Error(`--phase: unknown phase ${values.phase}`);
  out.peak_rss_mb = mb(status().VmHWM);
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String(e?.message ?? e).slice(0, 400);
  out.peak_rss_mb = mb(status().VmHWM);
}
out.process = { s: (performance.now() - wall0) / 1000, cpu_s: cpu() };
if (out.backend === 'wasm') out.wasm_heap_mb = mb(tf.backend().wasm.HEAPU8.buffer.byteLength);
console.log(JSON.stringify(out));
