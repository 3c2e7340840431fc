import { PolicyError } from './errors.js';

/**
 * The safetensors format on bytes in memory: the header's parsing and the decoding of a tensor, shared by
 * `SafetensorsFile` (positioned reads of a file, in Node) and `SafetensorsBytes` (a file fetched by a page).
 * Format: u64 little-endian header length N, N bytes of JSON header, then the raw data.
 */

/** Dtypes we read. Floats come back as Float32Array, integers as Int32Array (I64 range-checked). */
export type SafetensorsDtype = 'F32' | 'F16' | 'BF16' | 'F64' | 'I32' | 'I64';
/** Dtypes we write. */
export type WritableDtype = 'F32' | 'F16' | 'BF16' | 'I32';

export const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2, F64: 8, I32: 4, I64: 8 };

export interface TensorInfo {
  dtype: SafetensorsDtype;
  shape: number[];
  /** Byte range inside the data section (after the header). */
  offsets: [number, number];
}

/** A tensor in memory, float32 or int32, row-major. */
export interface HostTensor {
  shape: number[];
  data: Float32Array | Int32Array;
}

/** A tensor to write: `data` is converted to `dtype` (BF16/F16 round to nearest even). */
export interface TensorToWrite extends HostTensor {
  dtype?: WritableDtype;
}

/** Parse the JSON header `hdr` of a file whose data section has `dataSize` bytes; every entry checked. */
export function parseHeader(
  hdr: Uint8Array,
  dataSize: number,
  path: string,
): { tensors: Map<string, TensorInfo>; metadata: Record<string, string> } {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(new TextDecoder().decode(hdr)) as Record<string, unknown>;
  } catch (cause) {
    throw new PolicyError('invalid_checkpoint', 'header is not valid JSON', { file: path }, { cause });
  }
  const tensors = new Map<string, TensorInfo>();
  let metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(json)) {
    if (name === '__metadata__') {
      metadata = (v ?? {}) as Record<string, string>;
      continue;
    }
    const info = v as { dtype?: string; shape?: number[]; data_offsets?: [number, number] };
    if (!info || typeof info.dtype !== 'string' || !Array.isArray(info.shape) || !Array.isArray(info.data_offsets)) {
      throw new PolicyError('invalid_checkpoint', 'malformed header entry (needs dtype, shape, data_offsets)', {
        file: path,
        tensor: name,
      });
    }
    if (!(info.dtype in BYTES)) {
      throw new PolicyError('invalid_checkpoint', `unsupported dtype ${info.dtype} (supported: ${Object.keys(BYTES).join(', ')})`, {
        file: path,
        tensor: name,
      });
    }
    const dtype = info.dtype as SafetensorsDtype;
    const [s, e] = info.data_offsets;
    const numel = info.shape.reduce((a, b) => a * b, 1);
    if (e - s !== numel * BYTES[dtype] || s < 0 || e > dataSize) {
      throw new PolicyError(
        'invalid_checkpoint',
        `data_offsets [${s}, ${e}] do not fit shape [${info.shape}] of ${dtype} in a data section of ${dataSize} bytes`,
        { file: path, tensor: name },
      );
    }
    tensors.set(name, { dtype, shape: info.shape, offsets: [s, e] });
  }
  return { tensors, metadata };
}

/** The header length N of a file of `size` bytes from its first 8 bytes, checked against the size. */
export function headerLength(first8: Uint8Array, size: number, path: string): number {
  if (size < 8 || first8.length < 8) throw bad(path, 'file shorter than the 8-byte header length');
  const n = Number(new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true));
  if (n > size - 8 || n > 100_000_000) throw bad(path, `header length ${n} exceeds the file size ${size}`);
  return n;
}

/** A whole `.safetensors` file in memory (a browser's fetch): the same checks and decoding as `SafetensorsFile`. */
export class SafetensorsBytes {
  readonly path: string;
  readonly tensors: Map<string, TensorInfo>;
  readonly metadata: Record<string, string>;
  private readonly bytes: Uint8Array;
  private readonly dataStart: number;

  /** @param path names the file in errors (a URL, say) */
  constructor(bytes: Uint8Array, path: string) {
    const n = headerLength(bytes.subarray(0, 8), bytes.length, path);
    const { tensors, metadata } = parseHeader(bytes.subarray(8, 8 + n), bytes.length - 8 - n, path);
    this.path = path;
    this.bytes = bytes;
    this.tensors = tensors;
    this.metadata = metadata;
    this.dataStart = 8 + n;
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
    return { shape: info.shape, data: decode(this.bytes.subarray(this.dataStart + s, this.dataStart + e), info.dtype, this.path, name) };
  }
}

function bad(file: string, msg: string): PolicyError {
  return new PolicyError('invalid_checkpoint', msg, { file });
}

/** Decode little-endian raw bytes of a dtype. */
export function decode(buf: Uint8Array, dtype: SafetensorsDtype, file: string, tensor: string): Float32Array | Int32Array {
  const n = buf.length / BYTES[dtype];
  // Copy into an aligned ArrayBuffer: Buffer slices may be unaligned.
  const ab = new ArrayBuffer(buf.length);
  new Uint8Array(ab).set(buf);
  switch (dtype) {
    case 'F32':
      return new Float32Array(ab);
    case 'F64':
      return Float32Array.from(new Float64Array(ab));
    case 'BF16': {
      const src = new Uint16Array(ab);
      const out = new Uint32Array(n);
      for (let i = 0; i < n; i++) out[i] = src[i] << 16;
      return new Float32Array(out.buffer);
    }
    case 'F16': {
      const src = new Uint16Array(ab);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = halfToFloat(src[i]);
      return out;
    }
    case 'I32':
      return new Int32Array(ab);
    case 'I64': {
      const src = new BigInt64Array(ab);
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const v = src[i];
        if (v > 2147483647n || v < -2147483648n)
          throw new PolicyError('invalid_checkpoint', `I64 value ${v} at index ${i} does not fit int32`, { file, tensor });
        out[i] = Number(v);
      }
      return out;
    }
  }
}

export function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
