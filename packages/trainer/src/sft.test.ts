import { Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import { AdamW, AdamWConfigSchema } from './adamw.js';
import { beforeAll, describe, expect, test } from 'vitest';
import { tf } from './tf.js';
import { packSft, sftLoss, sftStep } from './sft.js';

const config = parseModelConfig({
  vocab_size: 23,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
});
const rows = [
  { prompt: [1, 2, 3], completion: [4, 5] },
  { prompt: [6], completion: [7, 8, 9, 10] },
];

beforeAll(async () => {
  await selectBackend({ backend: 'wasm' });
});

describe('packSft', () => {
  test('right-pads, shifts targets and masks the loss to completion tokens (by hand)', () => {
    const p = packSft(rows, 0);
    expect([p.rows, p.length, p.completionTokens]).toEqual([2, 5, 6]);
    expect([...p.ids]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect([...p.mask]).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    // row 0: positions 2, 3 predict 4, 5; row 1: positions 0..3 predict 7..10
    expect([...p.targets]).toEqual([2, 3, 4, 5, 0, 7, 8, 9, 10, 0]);
    expect([...p.lossMask]).toEqual([0, 0, 1, 1, 0, 1, 1, 1, 1, 0]);
    const q = packSft([{ prompt: [1], completion: [2] }, rows[1]!], 22);
    expect([...q.ids.slice(0, 5)]).toEqual([1, 2, 22, 22, 22]);
    expect([...q.mask.slice(0, 5)]).toEqual([1, 1, 0, 0, 0]);
    expect([...q.lossMask.slice(0, 5)]).toEqual([1, 0, 0, 0, 0]);
  });

  test('rejects an empty completion', () => {
    expect(() => packSft([{ prompt: [1], completion: [] }], 0)).toThrow('row 0: prompt and completion must be non-empty');
  });
});

describe('sftLoss', () => {
  test('equals the mean -log softmax of the completion tokens, each row scored alone on materialised logits', () => {
    const model = Qwen3Model.random(config, 3);
    const loss = sftLoss(model, packSft(rows, 0));
    // independent reference: each row unpadded, full [1, T, V] logits, log-softmax on the host in float64
    let total = 0;
    for (const r of rows) {
      const seq = [...r.prompt, ...r.completion];
      const logits = model.logits({ ids: tf.tensor2d([seq], [1, seq.length], 'int32') });
      const V = config.vocab_size;
      const l = logits.dataSync();
      for (let t = r.prompt.length - 1; t < seq.length - 1; t++) {
        const row = Array.from(l.slice(t * V, (t + 1) * V));
        const m = Math.max(...row);
        const lse = m + Math.log(row.reduce((a, x) => a + Math.exp(x - m), 0));
        total += lse - row[seq[t + 1]!]!;
      }
      logits.dispose();
    }
    expect(loss.dataSync()[0]).toBeCloseTo(total / 6, 4);
    loss.dispose();
    model.dispose();
  });

  test('padding neither conditions nor carries loss: any pad id, same loss; a padded row scores as alone', () => {
    const model = Qwen3Model.random(config, 4);
    const padded = [...rows, { prompt: [2], completion: [3] }];
    const a = sftLoss(model, packSft(padded, 0)).dataSync()[0]!;
    const b = sftLoss(model, packSft(padded, 17)).dataSync()[0]!;
    expect(b).toBeCloseTo(a, 5);
    const short = sftLoss(model, packSft([{ prompt: [2], completion: [3] }], 0)).dataSync()[0]!;
    const long = sftLoss(model, packSft(rows, 0)).dataSync()[0]!;
    expect(a).toBeCloseTo((short * 1 + long * 6) / 7, 5);
    model.dispose();
  });
});

describe('sftStep', () => {
  test('AdamW steps on one batch drive its loss down', async () => {
    const model = Qwen3Model.random(config, 5);
    const opt = new AdamW(AdamWConfigSchema.parse({}));
    const packed = packSft(rows, 0);
    const first = await sftStep(model, opt, packed, 1e-2, 1);
    let last = first;
    for (let i = 0; i < 30; i++) last = await sftStep(model, opt, packed, 1e-2, 1);
    expect(first.applied).toBe(true);
    expect(first.loss).toBeGreaterThan(2.5); // about ln(23) at initialisation
    expect(last.loss).toBeLessThan(0.5 * first.loss);
    expect(opt.step).toBe(31);
    opt.dispose();
    model.dispose();
  });
});
