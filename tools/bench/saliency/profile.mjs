// Where the time of the fused GRAIL pass goes, by kernel (tf.profile), beside the old-log-prob forward.
//   node tools/bench/saliency/profile.mjs [--backend wasm] [--batch 2]
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { Qwen3Model, parseModelConfig, selectBackend } from '@rlvr/policy';
import { batchFromRows } from '@rlvr/core';
import { logprobsWithGradXEmb, noisyKl } from '@rlvr/saliency';

const { values } = parseArgs({ options: { backend: { type: 'string', default: 'wasm' }, batch: { type: 'string', default: '2' } } });
await selectBackend({ backend: values.backend });
const config = parseModelConfig({
  model_type: 'qwen3',
  vocab_size: 4096,
  hidden_size: 256,
  intermediate_size: 1280,
  num_hidden_layers: 6,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  head_dim: 32,
  max_position_embeddings: 1024,
});
const model = Qwen3Model.random(config, 0, 0.02);
const B = Number(values.batch);
const tok = (n, s) => Array.from({ length: n }, (_, i) => 3 + ((i * 7919 + s * 104729) % 4000));
const batch = batchFromRows(
  Array.from({ length: B }, (_, i) => ({
    group: 0,
    reward: 0,
    prompt: tok(32, i),
    completion: tok(224, i + 100),
    spans: { open: [204, 207], content: [207, 212], close: [212, 213] },
  })),
);
const cases = {
  fused: () => logprobsWithGradXEmb(model, batch, { tokenBudget: 1 << 20 }),
  oarg: () => noisyKl(model, batch, { tokenBudget: 1 << 20 }),
};
for (const [name, fn] of Object.entries(cases)) {
  await fn();
  const p = await tf.profile(async () => {
    await fn();
  });
  const by = new Map();
  let total = 0;
  for (const k of p.kernels) {
    const ms = Number(k.kernelTimeMs) || 0;
    total += ms;
    const key =
      k.name === 'BatchMatMul'
        ? `BatchMatMul ${k.inputShapes.map((x) => `[${x}]`).join(' x ')} ${JSON.stringify(k.extraInfo ?? '')}`
        : k.name;
    const e = by.get(key) ?? { n: 0, ms: 0 };
    e.n++;
    e.ms += ms;
    by.set(key, e);
  }
  const top = [...by.entries()]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 20)
    .map(([k, e]) => `${k} x${e.n}: ${e.ms.toFixed(0)} ms`);
  console.log(name, 'total kernel ms', total.toFixed(0), '\n  ' + top.join('\n  '));
}
