// How long the credit metrics take at the size issue 39 asks for: WRONG wrong rollouts (plus CORRECT correct
// ones) of 60-200 tokens, METHODS methods, RESAMPLES bootstrap resamples. Times, in the same process: the
// baseline (one pass over every method's credit, summing it: the least any metric must read), creditMetrics
// (every per-rollout value, every bootstrap interval, every paired test), writeCreditJson and renderCreditPage.
//   npx nx run @rlvr/report:build && node tools/bench/report/credit.mjs [--wrong 2000] [--correct 1000] [--methods 6] [--resamples 2000] [--rounds 3]
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { creditMap, creditMetrics, renderCreditPage, writeCreditJson } from '../../../packages/report/dist/index.js';

const { values } = parseArgs({
  options: {
    wrong: { type: 'string', default: '2000' },
    correct: { type: 'string', default: '1000' },
    methods: { type: 'string', default: '6' },
    resamples: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
  },
});
const [wrong, correct, methodCount, resamples, rounds] = [
  values.wrong,
  values.correct,
  values.methods,
  values.resamples,
  values.rounds,
].map(Number);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
console.log(`uptime before: ${uptime()}`);

let seed = 1;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const B = wrong + correct;
const rollouts = Array.from({ length: B }, (_, i) => {
  const tokens = 60 + Math.floor(rand() * 141);
  const isCorrect = i % Math.round(B / correct) === 0 && correct > 0;
  const start = 1 + Math.floor(rand() * (tokens - 30));
  return {
    index: i,
    group: Math.floor(i / 8),
    correct: isCorrect,
    label: isCorrect ? 'correct' : { kind: 'arithmetic', tokenStart: start, tokenEnd: start + 3 + Math.floor(rand() * 12) },
    tokens,
  };
});
const offsets = new Int32Array(B + 1);
rollouts.forEach((r, i) => (offsets[i + 1] = offsets[i] + r.tokens));
const T = offsets[B];
const owner = new Int32Array(T);
for (let i = 0; i < B; i++) owner.fill(i, offsets[i], offsets[i + 1]);
const methods = Array.from({ length: methodCount }, (_, m) => {
  const weights = Float32Array.from({ length: T }, () => 0.2 + rand() * (1 + m / 2));
  const seq = Float64Array.from({ length: B }, () => (rand() < 0.1 ? 0 : rand() - 0.5));
  // a composed estimator's advantages: the sequence advantage times the weight
  const advantages = weights.map((w, t) => w * seq[owner[t]]);
  return creditMap(`method-${m}`, {
    advantages,
    sequenceAdvantages: seq,
    ...(m % 2 === 0 ? { weights } : {}),
    offsets,
    correct: rollouts.map((r) => r.correct),
  });
});
const input = { rollouts, methods };
console.log(`${B} rollouts (${wrong} wrong, ${correct} correct), ${T} tokens, ${methodCount} methods, ${resamples} resamples`);

const dir = await mkdtemp(join(tmpdir(), 'rlvr-bench-credit-'));
const time = async (f) => {
  const t0 = performance.now();
  const r = await f();
  return [performance.now() - t0, r];
};
for (let round = 0; round < rounds; round++) {
  const [base] = await time(() => {
    let s = 0;
    for (const m of methods) for (let t = 0; t < T; t++) s += m.credit[t] + m.absAdvantage[t];
    return s;
  });
  const [metrics, report] = await time(() => creditMetrics(input, { resamples }));
  const path = join(dir, 'credit.json');
  const [json] = await time(() => writeCreditJson(path, report));
  const [page, { html }] = await time(() => renderCreditPage(report));
  const size = (await stat(path)).size;
  console.log(
    `round ${round}: baseline ${base.toFixed(1)} ms, creditMetrics ${(metrics / 1000).toFixed(2)} s (${(metrics / base).toFixed(0)}x), writeCreditJson ${(json / 1000).toFixed(2)} s (${(size / 1e6).toFixed(1)} MB), renderCreditPage ${(page / 1000).toFixed(2)} s (${(html.length / 1e6).toFixed(2)} MB)`,
  );
}
await rm(dir, { recursive: true, force: true });
console.log(`uptime after: ${uptime()}`);
