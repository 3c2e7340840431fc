import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel } from './checkpoint.js';
import { completionLogprobs, packSequences } from './sequences.js';
import { TINY_DIR, reference, relError, useBackend } from './test-utils/fixtures.js';

describe('completionLogprobs', () => {
  beforeAll(() => useBackend('cpu'));

  it('matches the PyTorch log-probs of the same tokens, whatever the batching', async () => {
    const ref = reference();
    const [B, T] = ref.get('input_ids')!.shape;
    const ids = ref.get('input_ids')!.data;
    const mask = ref.get('attention_mask')!.data;
    const lp = ref.get('logprobs')!.data;
    const model = loadModel(TINY_DIR);
    // Each reference row's real tokens: first 2 as prompt, the rest as completion.
    const rows = [];
    const want: number[][] = [];
    for (let b = 0; b < B; b++) {
      const real: number[] = [];
      const pos: number[] = [];
      for (let t = 0; t < T; t++) {
        if (mask[b * T + t]) {
          real.push(ids[b * T + t]);
          pos.push(t);
        }
      }
      rows.push({ prompt: real.slice(0, 2), completion: real.slice(2) });
      want.push(pos.slice(1, -1).map((t) => lp[b * T + t]));
    }
    for (const batchSize of [1, 2, 3]) {
      const got = await completionLogprobs(model, rows, { batchSize });
      got.forEach((g, b) => expect(relError(g, want[b]), `row ${b}`).toBeLessThan(1e-4));
    }
    model.dispose();
    expect(tf.memory().numTensors).toBe(0);
  });

  it('names the row and the problem for bad ids, empty prompts and long sequences', () => {
    const lim = { vocabSize: 10, maxLength: 5 };
    expect(() =>
      packSequences(
        [
          { prompt: [1], completion: [2] },
          { prompt: [1], completion: [10] },
        ],
        lim,
      ),
    ).toThrow(/^row 1: completion\[0\] = 10 is not a token id in \[0, 10\)/);
    expect(() => packSequences([{ prompt: [-1], completion: [] }], lim, 4)).toThrow(/^row 4: prompt\[0\] = -1/);
    expect(() => packSequences([{ prompt: [], completion: [1] }], lim)).toThrow(/prompt is empty/);
    expect(() => packSequences([{ prompt: [1, 2, 3], completion: [1, 2, 3] }], lim)).toThrow(
      /6 tokens \(prompt 3 \+ completion 3\), more than the model's maximum 5/,
    );
  });
});
