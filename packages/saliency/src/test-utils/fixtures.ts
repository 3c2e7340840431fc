import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { batchFromRows, type RolloutBatch, type RolloutRowInput } from '@rlvr/core';
import { SafetensorsFile, loadModel, selectBackend, type BackendName, type Qwen3Model } from '@rlvr/policy';

/** packages/saliency/test/fixtures (written by tools/fixtures/saliency/make_fixtures.py) */
const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
export const TINY_DIR = join(FIXTURES, 'tiny');

/** Backends every numerical test runs on. */
export const TEST_BACKENDS: BackendName[] = ['cpu', 'wasm'];

export async function useBackend(name: BackendName): Promise<void> {
  await selectBackend({ backend: name });
}

export function tinyModel(): Qwen3Model {
  return loadModel(TINY_DIR);
}

/** The fixture's rollouts, in row form and as a batch. */
export function fixtureRows(): (RolloutRowInput & { prompt: number[]; completion: number[] })[] {
  return JSON.parse(readFileSync(join(FIXTURES, 'batch.json'), 'utf8'));
}

export function fixtureBatch(): RolloutBatch {
  return batchFromRows(fixtureRows());
}

export type HostTensor = { shape: number[]; data: Float32Array | Int32Array };

/** The PyTorch reference tensors. */
export function reference(): Map<string, HostTensor> {
  const f = SafetensorsFile.open(join(FIXTURES, 'reference.safetensors'));
  return new Map([...f.tensors.keys()].map((k) => [k, f.read(k) as HostTensor]));
}

/** max |a - b| / max |b| over the selected entries: the error relative to the reference's scale. */
export function relError(a: ArrayLike<number>, b: ArrayLike<number>, mask?: (i: number) => boolean): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    if (mask && !mask(i)) continue;
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return num / Math.max(den, 1e-30);
}

/** Packed `[B, C]` reference rows -> the batch's `[totalTokens]` layout. */
export function unpackRows(batch: RolloutBatch, values: ArrayLike<number>, C: number): Float32Array {
  const out = new Float32Array(batch.completionOffsets[batch.numRollouts]!);
  for (let i = 0; i < batch.numRollouts; i++) {
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    for (let t = 0; t < cl; t++) out[c0 + t] = values[i * C + t]!;
  }
  return out;
}
