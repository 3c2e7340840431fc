import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, fstatSync } from 'node:fs';
import { writeFileAtomicSync } from '@rlvr/core';
import { join } from 'node:path';
import { PolicyError } from './errors.js';
import { BYTES, decode, headerLength, parseHeader } from './safetensors-format.js';
import type { HostTensor, TensorInfo, TensorToWrite, WritableDtype } from './safetensors-format.js';

/**
 * One `.safetensors` file opened for reading: the header is parsed up front, tensors are read
 * on demand with positioned reads (so multi-GB checkpoints are not loaded at once).
 * Format: u64 little-endian header length N, N bytes of JSON header, then the raw data.
 */
export class SafetensorsFile {
  readonly path: string;
  readonly tensors: Map<string, TensorInfo>;
  readonly metadata: Record<string, string>;
  private readonly dataStart: number;

  private constructor(path: string, tensors: Map<string, TensorInfo>, metadata: Record<string, string>, dataStart: number) {
    this.path = path;
    this.tensors = tensors;
    this.metadata = metadata;
    this.dataStart = dataStart;
  }

  static open(path: string): SafetensorsFile {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (cause) {
      throw new PolicyError('invalid_checkpoint', `cannot open safetensors file: ${(cause as Error).message}`, { file: path }, { cause });
    }
    try {
      const size = fstatSync(fd).size;
      const lenBuf = Buffer.alloc(8);
      const n = headerLength(lenBuf.subarray(0, readSync(fd, lenBuf, 0, 8, 0)), size, path);
      const hdr = Buffer.alloc(n);
      readSync(fd, hdr, 0, n, 8);
      const { tensors, metadata } = parseHeader(hdr, size - 8 - n, path);
      return new SafetensorsFile(path, tensors, metadata, 8 + n);
    } finally {
      closeSync(fd);
    }
  }

  /** Read one tensor: floats as Float32Array, integers as Int32Array. */
  read(name: string): HostTensor {
    const info = this.tensors.get(name);
    if (!info)
      throw new PolicyError('missing_tensor', `tensor not found (file has ${this.tensors.size} tensors)`, {
        file: this.path,
        tensor: name,
      });
    const [s, e] = info.offsets;
    const buf = Buffer.alloc(e - s);
    const fd = openSync(this.path, 'r');
    try {
      readSync(fd, buf, 0, e - s, this.dataStart + s);
    } finally {
      closeSync(fd);
    }
    return { shape: info.shape, data: decode(buf, info.dtype, this.path, name) };
  }
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 -> IEEE half bits, round to nearest even. */
export function floatToHalf(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = mant | 0x800000;
    const shift = 14 - e;
    let h = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return h;
}

/** float32 -> bfloat16 bits, round to nearest even (NaN kept NaN). */
export function floatToBf16(x: number): number {
  f32[0] = x;
  const b = u32[0];
  if ((b & 0x7fffffff) > 0x7f800000) return ((b >>> 16) | 0x40) & 0xffff;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

function encode(t: TensorToWrite, dtype: WritableDtype): Buffer {
  const { data } = t;
  switch (dtype) {
    case 'F32':
      return Buffer.from(Float32Array.from(data).buffer);
    case 'I32':
      return Buffer.from(Int32Array.from(data).buffer);
    case 'BF16':
    case 'F16': {
      const out = new Uint16Array(data.length);
      const conv = dtype === 'BF16' ? floatToBf16 : floatToHalf;
      for (let i = 0; i < data.length; i++) out[i] = conv(data[i]);
      return Buffer.from(out.buffer);
    }
  }
}

/** Serialise tensors (sorted by name, as Hugging Face does) into header + data buffers. */
function encodeSafetensors(
  tensors: Map<string, TensorToWrite>,
  metadata: Record<string, string> = {},
  defaultDtype: WritableDtype = 'F32',
): Buffer[] {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  const blobs: Buffer[] = [];
  let off = 0;
  for (const name of [...tensors.keys()].sort()) {
    const t = tensors.get(name)!;
    const numel = t.shape.reduce((a, b) => a * b, 1);
    if (numel !== t.data.length)
      throw new PolicyError('shape_mismatch', `shape [${t.shape}] has ${numel} elements but data has ${t.data.length}`, { tensor: name });
    const dtype = t.dtype ?? (t.data instanceof Int32Array ? 'I32' : defaultDtype);
    const b = encode(t, dtype);
    header[name] = { dtype, shape: t.shape, data_offsets: [off, off + b.length] };
    blobs.push(b);
    off += b.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return [len, Buffer.from(json, 'utf8'), ...blobs];
}

/** Write one safetensors file atomically. */
export function writeSafetensors(
  path: string,
  tensors: Map<string, TensorToWrite>,
  options: { metadata?: Record<string, string>; dtype?: WritableDtype } = {},
): void {
  writeFileAtomicSync(path, encodeSafetensors(tensors, options.metadata ?? { format: 'pt' }, options.dtype ?? 'F32'));
}

export const INDEX_FILE = 'model.safetensors.index.json';
export const SINGLE_FILE = 'model.safetensors';

/**
 * Write a checkpoint's weights into `dir`: one `model.safetensors` when it fits in
 * `maxShardBytes`, else `model-0000i-of-0000n.safetensors` shards plus
 * `model.safetensors.index.json` (Hugging Face's layout). Each file is written atomically;
 * the index is written last, so a reader never sees an index naming missing shards.
 */
export function writeCheckpointWeights(
  dir: string,
  tensors: Map<string, TensorToWrite>,
  options: { dtype?: WritableDtype; maxShardBytes?: number } = {},
): string[] {
  const dtype = options.dtype ?? 'F32';
  const max = options.maxShardBytes ?? 5 * 1024 ** 3;
  const shards: string[][] = [[]];
  let cur = 0;
  let total = 0;
  for (const name of [...tensors.keys()].sort()) {
    const t = tensors.get(name)!;
    const bytes = t.data.length * BYTES[t.dtype ?? (t.data instanceof Int32Array ? 'I32' : dtype)];
    if (cur > 0 && cur + bytes > max) {
      shards.push([]);
      cur = 0;
    }
    shards[shards.length - 1].push(name);
    cur += bytes;
    total += bytes;
  }
  if (shards.length === 1) {
    writeSafetensors(join(dir, SINGLE_FILE), tensors, { dtype });
    rmSync(join(dir, INDEX_FILE), { force: true });
    return [SINGLE_FILE];
  }
  const n = shards.length;
  const files: string[] = [];
  const weightMap: Record<string, string> = {};
  shards.forEach((names, i) => {
    const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;
    writeSafetensors(join(dir, file), new Map(names.map((k) => [k, tensors.get(k)!])), { dtype });
    for (const k of names) weightMap[k] = file;
    files.push(file);
  });
  writeFileAtomicSync(join(dir, INDEX_FILE), [JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2) + '\n']);
  rmSync(join(dir, SINGLE_FILE), { force: true });
  return files;
}

/**
 * The weights of a model directory: `model.safetensors.index.json` + shards when present,
 * else `model.safetensors`. Maps each tensor name to its file.
 */
export class CheckpointReader {
  readonly dir: string;
  private readonly files = new Map<string, SafetensorsFile>();
  private readonly where = new Map<string, SafetensorsFile>();

  constructor(dir: string) {
    this.dir = dir;
    const indexPath = join(dir, INDEX_FILE);
    if (existsSync(indexPath)) {
      let index: { weight_map?: Record<string, string> };
      try {
        index = JSON.parse(readFileSync(indexPath, 'utf8')) as typeof index;
      } catch (cause) {
        throw new PolicyError('invalid_checkpoint', 'index is not valid JSON', { file: indexPath }, { cause });
      }
      if (!index.weight_map || typeof index.weight_map !== 'object')
        throw new PolicyError('invalid_checkpoint', 'index has no weight_map', { file: indexPath });
      for (const [name, file] of Object.entries(index.weight_map)) {
        let f = this.files.get(file);
        if (!f) {
          f = SafetensorsFile.open(join(dir, file));
          this.files.set(file, f);
        }
        if (!f.tensors.has(name))
          throw new PolicyError('missing_tensor', `index names ${file} but the shard does not hold it`, { file: indexPath, tensor: name });
        this.where.set(name, f);
      }
    } else {
      const single = join(dir, SINGLE_FILE);
      if (!existsSync(single))
        throw new PolicyError('invalid_checkpoint', `no ${SINGLE_FILE} or ${INDEX_FILE} in the model directory`, { file: dir });
      const f = SafetensorsFile.open(single);
      this.files.set(SINGLE_FILE, f);
      for (const name of f.tensors.keys()) this.where.set(name, f);
    }
  }

  names(): string[] {
    return [...this.where.keys()];
  }

  info(name: string): TensorInfo | undefined {
    return this.where.get(name)?.tensors.get(name);
  }

  /** The path of the file holding tensor `name` (for error messages), or the directory when none does. */
  fileOf(name: string): string {
    return this.where.get(name)?.path ?? this.dir;
  }

  read(name: string): HostTensor {
    const f = this.where.get(name);
    if (!f) throw new PolicyError('missing_tensor', `tensor not found in the checkpoint at ${this.dir}`, { tensor: name });
    return f.read(name);
  }
}
