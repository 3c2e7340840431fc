// node packages/saliency/examples/usage.mjs   (after: npx tsc -b packages/saliency)
import { Signals, SIGNAL_NAMES, batchFromRows } from '@rlvr/core';
import { Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import { computeSaliency, logprobsWithGradXEmb } from '@rlvr/saliency';

await selectBackend({ backend: 'cpu' });
// Any Qwen3/Llama checkpoint works (loadModel(DIR)); a small random one keeps the example offline.
const model = Qwen3Model.random(
  parseModelConfig({
    vocab_size: 300,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
  }),
  0,
);

// Token ranges are relative to the completion, half-open: `\boxed{` = [3, 5), the answer [5, 7), `}` = [7, 8).
const batch = batchFromRows([
  {
    group: 0,
    reward: 1,
    prompt: [11, 12, 13],
    completion: [21, 22, 23, 24, 25, 26, 27, 28, 2],
    spans: { open: [3, 5], content: [5, 7], close: [7, 8] },
  },
  { group: 0, reward: 0, prompt: [11, 12, 13], completion: [31, 32, 33, 2] }, // no answer: no scores
]);

// The fused pass for a trainer: old log-probs AND GRAIL scores from one forward + one input-only backward.
const fused = await logprobsWithGradXEmb(model, batch, { answerSpan: 'boxed', alignment: 'previous' });
console.log('old log-probs', Array.from(fused.logprobs, (v) => v.toFixed(2)).join(' '));
console.log('GRAIL scores ', Array.from(fused.scores, (v) => v.toExponential(1)).join(' '));
console.log('has scores', Array.from(fused.hasScores), 'L_ans', Array.from(fused.loss));

// Any backend by name, straight into the Signals an advantage estimator reads.
const signals = new Signals(fused.scores.length);
const { result } = await computeSaliency('noisy-kl', model, batch, { seed: 1 }, signals);
console.log('OAR-G scores ', Array.from(signals.get(SIGNAL_NAMES.noisyKl), (v) => v.toExponential(1)).join(' '), 'missing', result.missing);
model.dispose();
