// How long `rlvr report` takes on a large run, against a baseline measured in the same process:
// reading the same files with nothing but readFile + JSON.parse per line (no validation). Writes a
// synthetic run (STEPS metric lines, SAMPLES completions of about TOKENS tokens, evals every 50
// steps) to a temporary directory, then alternates ROUNDS of: the bare parse, readRunDir (parse +
// validation), renderReport (charts and page), writeReport (all of it, written atomically).
//   npx nx run @rlvr/report:build && node tools/bench/report/bench.mjs [--steps 2000] [--samples 4000] [--tokens 400] [--rounds 3]
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readRunDir, renderReport, writeReport } from '../../../packages/report/dist/index.js';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '2000' },
    samples: { type: 'string', default: '4000' },
    tokens: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '3' },
  },
});
const [steps, samples, tokens, rounds] = [values.steps, values.samples, values.tokens, values.rounds].map(Number);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
console.log(`uptime before: ${uptime()}`);

const dir = await mkdtemp(join(tmpdir(), 'rlvr-bench-report-'));
let seed = 1;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const metrics = [];
const evals = [];
for (let s = 0; s < steps; s++) {
  const m = {
    step: s,
    'reward/mean': s / steps + 0.1 * rand(),
    'reward/std': 0.3,
    'loss/policy': rand() - 0.5,
    'kl/approx': rand() * 1e-3,
    entropy: 1 - s / steps / 2,
    'clip/low_frac': 0.01 * rand(),
    'clip/high_frac': 0.02 * rand(),
    grad_norm: rand(),
    lr: 1e-6,
    tokens_per_s: 1000 + rand(),
    'completions/mean_length': tokens + rand(),
    'weights/correct/mean': 1 + 0.1 * rand(),
    'weights/wrong/mean': 1 + 0.1 * rand(),
  };
  if (s % 50 === 0) {
    const correct = Array.from({ length: 128 }, () => Math.floor(9 * rand()));
    const e = {
      step: s,
      accuracy: correct.reduce((a, c) => a + c / 8, 0) / 128,
      passAtN: correct.filter((c) => c > 0).length / 128,
      n: 8,
      problems: 128,
      correct,
    };
    m.accuracy = e.accuracy;
    evals.push(JSON.stringify(e));
  }
  metrics.push(JSON.stringify(m));
}
const lines = [];
for (let i = 0; i < samples; i++) {
  const len = Math.max(8, Math.round(tokens * (0.5 + rand())));
  const correct = rand() < 0.5;
  const weights = Array.from(
    { length: len },
    (_, t) => +(1 + (correct ? 0.8 : 0.4) * ((2 * t) / len - 1) ** 2 - 0.2 + 0.05 * rand()).toFixed(4),
  );
  lines.push(
    JSON.stringify({
      step: Math.floor((i / samples) * steps),
      group: i % 8,
      reward: correct ? 1 : 0,
      correct,
      advantage: correct ? 0.5 : -0.5,
      prompt: 'Compute 12 * 7.',
      tokens: Array.from({ length: len }, (_, t) => (t % 7 === 0 ? '\n' : ' tok')),
      weights,
      spans: { open: [len - 4, len - 3], content: [len - 3, len - 2], close: [len - 2, len - 1] },
    }),
  );
}
await writeFile(join(dir, 'metrics.jsonl'), metrics.join('\n') + '\n');
await writeFile(join(dir, 'samples.jsonl'), lines.join('\n') + '\n');
await writeFile(join(dir, 'evals.jsonl'), evals.join('\n') + '\n');

/** The baseline: every line of the three files through JSON.parse, nothing else. */
async function bareParse() {
  let n = 0;
  for (const f of ['metrics.jsonl', 'samples.jsonl', 'evals.jsonl'])
    for (const l of (await readFile(join(dir, f), 'utf8')).split('\n')) if (l !== '') n += JSON.parse(l) === null ? 0 : 1;
  return n;
}
const time = async (f) => {
  const t0 = performance.now();
  const r = await f();
  return [performance.now() - t0, r];
};
const ms = { parse: [], read: [], render: [], write: [] };
let page = 0;
let charts = 0;
for (let r = 0; r < rounds; r++) {
  ms.parse.push((await time(bareParse))[0]);
  const [readMs, run] = await time(() => readRunDir(dir));
  ms.read.push(readMs);
  ms.render.push((await time(() => renderReport(run)))[0]);
  const [writeMs, res] = await time(() => writeReport(dir));
  ms.write.push(writeMs);
  page = res.bytes;
  charts = res.charts;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const m = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
const samplesBytes = (await stat(join(dir, 'samples.jsonl'))).size;
console.log(
  `run: ${steps} steps, ${samples} samples (${(samplesBytes / 1e6).toFixed(1)} MB samples.jsonl), ${evals.length} evals; page ${(page / 1e6).toFixed(2)} MB, ${charts} charts; medians of ${rounds} rounds`,
);
console.log(`bare JSON.parse of the three files   ${m.parse.toFixed(0)} ms   1.00x`);
console.log(`readRunDir (parse + validate)        ${m.read.toFixed(0)} ms   ${(m.read / m.parse).toFixed(2)}x`);
console.log(`renderReport (charts, page)          ${m.render.toFixed(0)} ms   ${(m.render / m.parse).toFixed(2)}x`);
console.log(`writeReport (read, render, write)    ${m.write.toFixed(0)} ms   ${(m.write / m.parse).toFixed(2)}x`);
console.log(`uptime after: ${uptime()}`);
await rm(dir, { recursive: true, force: true });
