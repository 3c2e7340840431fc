import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyError } from './errors.js';
import { SafetensorsBytes, halfToFloat, type TensorToWrite } from './safetensors-format.js';
import { CheckpointReader, SafetensorsFile, floatToBf16, floatToHalf, writeCheckpointWeights, writeSafetensors } from './safetensors.js';
import { FIXTURES } from './test-utils/fixtures.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'policy-st-'));

describe('safetensors', () => {
  it('reads F32, F16, BF16, I32 and I64 written by the Python writer', () => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, 'dtypes.json'), 'utf8')) as Record<
      string,
      { dtype: string; shape: number[]; values: number[] }
    >;
    const f = SafetensorsFile.open(join(FIXTURES, 'dtypes.safetensors'));
    for (const [name, e] of Object.entries(expected)) {
      const t = f.read(name);
      expect(f.tensors.get(name)!.dtype).toBe(e.dtype);
      expect(t.shape).toEqual(e.shape);
      expect(Array.from(t.data)).toEqual(e.values.map((v) => (e.dtype.startsWith('I') ? v : Math.fround(v))));
    }
  });

  it('half and bfloat16 conversions round to nearest even', () => {
    expect(halfToFloat(floatToHalf(65504))).toBe(65504);
    expect(halfToFloat(floatToHalf(1 + 2 ** -11))).toBe(1); // tie -> even
    expect(halfToFloat(floatToHalf(1 + 3 * 2 ** -11))).toBe(1 + 2 ** -9);
    expect(halfToFloat(floatToHalf(2 ** -24))).toBe(2 ** -24); // subnormal
    expect(halfToFloat(floatToHalf(1e6))).toBe(Infinity);
    expect(floatToBf16(1 + 2 ** -8)).toBe(0x3f80); // tie -> even
    expect(floatToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82);
  });

  it('round-trips F32 / F16 / BF16 / I32 and writes atomically (no temporary file left)', () => {
    const dir = tmp();
    const data = Float32Array.from([0.1, -2, 3.5, 1e-3, 7, 8]);
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const p = join(dir, `${dtype}.safetensors`);
      writeSafetensors(
        p,
        new Map([
          ['w', { shape: [2, 3], data, dtype }],
          ['i', { shape: [2], data: Int32Array.from([4, -5]) }],
        ]),
      );
      const f = SafetensorsFile.open(p);
      const back = f.read('w').data;
      const tol = dtype === 'F32' ? 0 : dtype === 'F16' ? 1e-3 : 8e-3;
      data.forEach((v, i) => expect(Math.abs(back[i] - v)).toBeLessThanOrEqual(tol * Math.abs(v)));
      expect(Array.from(f.read('i').data)).toEqual([4, -5]);
      expect(f.metadata).toEqual({ format: 'pt' });
    }
    expect(readdirSync(dir).sort()).toEqual(['BF16.safetensors', 'F16.safetensors', 'F32.safetensors']);
  });

  it('writes and reads sharded checkpoints with a Hugging Face index', () => {
    const dir = tmp();
    const tensors = new Map<string, TensorToWrite>(
      [...'abcde'].map((k, i) => [`t.${k}`, { shape: [100], data: new Float32Array(100).fill(i) }]),
    );
    const files = writeCheckpointWeights(dir, tensors, { maxShardBytes: 900 });
    expect(files).toEqual(['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors']);
    const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
    expect(index.metadata.total_size).toBe(2000);
    expect(index.weight_map['t.e']).toBe('model-00003-of-00003.safetensors');
    const r = new CheckpointReader(dir);
    expect(r.names().sort()).toEqual([...tensors.keys()]);
    expect(r.read('t.d').data[5]).toBe(3);
  });

  it('reports corrupt files and missing tensors with the file and tensor', () => {
    const dir = tmp();
    const p = join(dir, 'bad.safetensors');
    writeFileSync(p, Buffer.from([1, 2, 3]));
    expect(() => SafetensorsFile.open(p)).toThrow(/bad\.safetensors: file shorter than the 8-byte header length/);
    const hdr = Buffer.from(JSON.stringify({ w: { dtype: 'F32', shape: [4], data_offsets: [0, 8] } }));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(hdr.length));
    writeFileSync(p, Buffer.concat([len, hdr, Buffer.alloc(8)]));
    expect(() => SafetensorsFile.open(p)).toThrow(/tensor w: data_offsets \[0, 8\] do not fit shape \[4\] of F32/);
    const ok = SafetensorsFile.open(join(FIXTURES, 'dtypes.safetensors'));
    try {
      ok.read('nope');
      expect.unreachable();
    } catch (e) {
      expect((e as PolicyError).code).toBe('missing_tensor');
      expect((e as PolicyError).message).toMatch(/dtypes\.safetensors, tensor nope: tensor not found/);
    }
    expect(() => new CheckpointReader(dir)).toThrow(/no model\.safetensors or model\.safetensors\.index\.json/);
  });

  it('SafetensorsBytes (a file fetched by a page) reads what SafetensorsFile reads, with the same checks', () => {
    const path = join(FIXTURES, 'dtypes.safetensors');
    const file = SafetensorsFile.open(path);
    const mem = new SafetensorsBytes(new Uint8Array(readFileSync(path)), 'http://x/dtypes.safetensors');
    expect([...mem.tensors]).toEqual([...file.tensors]);
    for (const name of file.tensors.keys()) expect(mem.read(name)).toEqual(file.read(name));
    expect(() => mem.read('nope')).toThrow(/http:\/\/x\/dtypes\.safetensors, tensor nope: tensor not found/);
    expect(() => new SafetensorsBytes(new Uint8Array([1, 2, 3]), 'short')).toThrow(/short: file shorter than the 8-byte header length/);
    const hdr = Buffer.from(JSON.stringify({ w: { dtype: 'F32', shape: [4], data_offsets: [0, 8] } }));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(hdr.length));
    expect(() => new SafetensorsBytes(Buffer.concat([len, hdr, Buffer.alloc(8)]), 'w.st')).toThrow(
      /tensor w: data_offsets \[0, 8\] do not fit shape \[4\] of F32/,
    );
  });
});
