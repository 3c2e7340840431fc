// The README's "model elsewhere" example: answer spans from the token strings your tokenizer gave,
// then GRAIL weights from your own saliency. No tfjs. Run after building: node packages/advantages/examples/spans.mjs
import { Signals, batchFromRows, getSpans, spanLocator, tokenPieces } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';

// Two completions of one prompt as byte-level BPE token strings (Hugging Face's convert_ids_to_tokens for Qwen or
// Llama 3: `Ġ` is a space); decoded per-token text works too, with 'text' instead of 'byte-level'.
const completions = [
  { ids: [40, 41, 42, 43, 44, 45, 46, 47], tokens: ['So', 'Ġ\\', 'boxed', '{', '1', '4', '}', '.'], reward: 1 },
  { ids: [50, 51, 52, 53, 54, 55, 56], tokens: ['It', "'s", 'Ġ\\', 'boxed', '{', '9', '}'], reward: 0 },
];
const locate = spanLocator(); // the last \boxed{...}, as the grader reads it
const batch = batchFromRows(
  completions.map((c) => ({
    group: 0,
    completion: c.ids,
    reward: c.reward,
    spans: locate.fromPieces(tokenPieces(c.tokens, 'byte-level')),
  })),
);
// your model's grad x embedding saliency per completion token, Float32Array[totalTokens]
const signals = new Signals(15, {
  'saliency.gradXEmb': Float32Array.from([0.1, 0.3, 0.2, 0.4, 0.9, 0.8, 0.2, 0.1, 0.2, 0.1, 0.3, 0.2, 0.4, 0.7, 0.2]),
});
const { advantages, weights } = prepareEstimator('grail', { symmetry: 'both' }).estimate(batch, signals);
console.log(JSON.stringify([0, 1].map((i) => getSpans(batch, i))));
console.log(Array.from(weights, (w) => w.toFixed(3)).join(' '));
console.log(Array.from(advantages, (a) => a.toFixed(3)).join(' '));
