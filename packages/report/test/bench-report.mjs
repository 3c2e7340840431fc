// How long `rlvr report` takes, and how big the page gets, on a large run.
//   npx tsc -b packages/reference-trainer && node packages/reference-trainer/test/bench-report.mjs [STEPS] [SAMPLES] [TOKENS]
// Writes a synthetic run (STEPS metric lines, SAMPLES completions of about TOKENS tokens)
// to a temp dir, then times reading it and rendering + writing the report.
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readRunDir, writeReport } from '../dist/index.js';

const [steps = 2000, samples = 4000, tokens = 400] = process.argv.slice(2).map(Number);
const dir = await mkdtemp(join(tmpdir(), 'rlvr-bench-'));
let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

const metrics = [];
for (let s = 0; s < steps; s++) {
  const m = { step: s, 'reward/mean': s / steps + 0.1 * rand(), 'reward/std': 0.3, 'loss/policy': rand() - 0.5, 'kl/approx': rand() * 1e-3, entropy: 1 - s / steps / 2, 'clip/low_frac': 0.01, 'clip/high_frac': 0.02, grad_norm: rand(), lr: 1e-6, tokens_per_s: 1000, 'completions/mean_length': tokens, 'weights/correct/mean': 1, 'weights/wrong/mean': 1 };
  if (s % 50 === 0) m.accuracy = s / steps;
  metrics.push(JSON.stringify(m));
}
await writeFile(join(dir, 'metrics.jsonl'), metrics.join('\n') + '\n');
const lines = [];
for (let i = 0; i < samples; i++) {
  const len = Math.max(8, Math.round(tokens * (0.5 + rand())));
  const correct = rand() < 0.5;
  const weights = Array.from({ length: len }, (_, t) => +(1 + (correct ? 0.8 : 0.4) * ((2 * t) / len - 1) ** 2 - 0.2 + 0.05 * rand()).toFixed(4));
  lines.push(JSON.stringify({ step: Math.floor((i / samples) * steps), group: i % 8, reward: correct ? 1 : 0, correct, advantage: correct ? 0.5 : -0.5, prompt: 'Compute 12 * 7.', tokens: Array.from({ length: len }, (_, t) => (t % 7 === 0 ? '\n' : ' tok')), weights, spans: { open: [len - 4, len - 3], content: [len - 3, len - 2], close: [len - 2, len - 1] } }));
}
await writeFile(join(dir, 'samples.jsonl'), lines.join('\n') + '\n');

let t0 = performance.now();
const run = await readRunDir(dir);
const readMs = performance.now() - t0;
t0 = performance.now();
const r = await writeReport(dir);
const totalMs = performance.now() - t0;
console.log(JSON.stringify({ steps, samples, tokens: run.samples.reduce((n, s) => n + s.tokens.length, 0), samplesBytes: (await stat(join(dir, 'samples.jsonl'))).size, readMs: Math.round(readMs), readRenderWriteMs: Math.round(totalMs), reportBytes: r.bytes, charts: r.charts }));
await rm(dir, { recursive: true, force: true });
