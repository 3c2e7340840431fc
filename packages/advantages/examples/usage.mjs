// The README's usage example. Run after building: node packages/advantages/examples/usage.mjs
import { Signals, batchFromRows } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';

// Two rollouts answering the same prompt; token ids are whatever your tokenizer gave.
const batch = batchFromRows([
  { group: 0, completion: [11, 12, 13, 14, 15, 16], reward: 1, spans: { open: [2, 3], content: [3, 4], close: [4, 5] } },
  { group: 0, completion: [21, 22, 23, 24, 25], reward: 0, spans: { open: [1, 2], content: [2, 3], close: [3, 4] } },
]);
// GRAIL's raw per-token saliency (from @rlvr/saliency, or your own pipeline): Float32Array[totalTokens]
const signals = new Signals(11, {
  'saliency.gradXEmb': Float32Array.from([0.02, 0.4, 0.1, 0.9, 0.3, 0.01, 0.05, 0.2, 0.7, 0.6, 0.02]),
});

const grail = prepareEstimator('grail', { symmetry: 'both' }); // bad options throw here, naming the field
const { advantages, weights, metrics } = grail.estimate(batch, signals);
console.log(Array.from(advantages, (a) => a.toFixed(3)).join(' '));
console.log(Array.from(weights, (w) => w.toFixed(3)).join(' '));
console.log(metrics.weight_mean_wrong.toFixed(3), metrics.clip_frac_min);
