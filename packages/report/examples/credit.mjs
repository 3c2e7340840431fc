// The README's credit-map example: several estimators' advantages on one frozen batch, scored against first-error
// labels, written as a JSON (for SciPy) and an HTML page. Run after building: node packages/report/examples/credit.mjs [OUT_DIR]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Rng, Signals, batchFromRows } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';
import { creditMap, creditMetrics, writeCreditJson, writeCreditPage } from '@rlvr/report';

const out = process.argv[2] ?? 'credit-example';
mkdirSync(out, { recursive: true });
const rng = new Rng(1);

// A frozen batch: 12 prompts x 8 rollouts of 40-80 tokens, the boxed answer at the end. In a real run these come
// from the sampler, and each wrong rollout's first error from @rlvr/tasks' labeller.
const rows = [];
const labels = [];
for (let i = 0; i < 96; i++) {
  const n = 40 + rng.int(41);
  const correct = rng.float() < 0.4;
  rows.push({
    group: Math.floor(i / 8),
    completion: Array.from({ length: n }, () => rng.int(1000)),
    reward: correct ? 1 : 0,
    spans: { open: [n - 4, n - 3], content: [n - 3, n - 2], close: [n - 2, n - 1] },
  });
  const start = rng.int(n - 12); // 0: the first line is already wrong (no correct prefix)
  labels.push(correct ? 'correct' : rng.float() < 0.1 ? 'unlabelled' : { kind: 'arithmetic', tokenStart: start, tokenEnd: start + 6 });
}
const batch = batchFromRows(rows);
const T = batch.completionOffsets[batch.numRollouts];
// the signals the estimators read (from @rlvr/saliency in a real run), Float32Array[T] each
const signals = new Signals(T, {
  'saliency.gradXEmb': Float32Array.from({ length: T }, () => Math.exp(rng.normal())),
  'saliency.noisyKl': Float32Array.from({ length: T }, () => Math.exp(rng.normal())),
});

// Every estimator on the same batch; each one's credit map. Composed estimators carry their weights.
const correct = rows.map((row) => row.reward === 1); // the verifier's verdicts
const methods = ['grpo', 'grail', 'grpo+oar-g'].map((name) => {
  const r = prepareEstimator(name, {}).estimate(batch, signals);
  return creditMap(name, {
    advantages: r.advantages,
    sequenceAdvantages: r.sequenceAdvantages,
    weights: r.weights,
    offsets: batch.completionOffsets,
    correct,
  });
});
const rollouts = rows.map((row, i) => ({
  index: i,
  group: row.group,
  correct: correct[i],
  label: labels[i],
  tokens: row.completion.length,
}));

const report = creditMetrics({ rollouts, methods }, { resamples: 1000, seed: 0 });
await writeCreditJson(join(out, 'credit.json'), report);
const { charts } = await writeCreditPage(join(out, 'credit.html'), report, { title: 'example', subtitle: '96 synthetic rollouts' });
console.log(`status: ${JSON.stringify(report.counts.status)}`);
for (const m of report.methods) {
  const a = m.wrong.auroc;
  console.log(`${m.name}: error-line AUROC ${a.mean.toFixed(3)} [${a.ci[0].toFixed(3)}, ${a.ci[1].toFixed(3)}] over ${a.n} rollouts`);
}
console.log(`wrote ${join(out, 'credit.json')} and ${join(out, 'credit.html')} (${charts} charts)`);
