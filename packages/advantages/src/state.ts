import { AdvantagesError } from './errors.js';
import type { EstimatorState } from './types.js';

/** A JSON value. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const TYPED = { Float32Array, Float64Array, Int32Array, Uint8Array } as const;
type TypedName = keyof typeof TYPED;

/**
 * An estimator's state as JSON, bit for bit: typed arrays as `{"$typed": "Float64Array", "base64": ...}`
 * of their bytes, the numbers JSON cannot hold exactly (NaN, ±Infinity, -0) as `{"$number": "NaN"}`.
 * What a trainer writes into its checkpoint; `decodeState` reads it back. A function, a class instance
 * or a key starting with `$` is an `AdvantagesError('invalid_input')` naming the path.
 */
export function encodeState(state: EstimatorState | undefined, path = 'state'): Json {
  if (state === undefined) return null;
  if (state === null || typeof state === 'boolean' || typeof state === 'string') return state;
  if (typeof state === 'number') {
    if (Number.isFinite(state) && !Object.is(state, -0)) return state;
    return { $number: Object.is(state, -0) ? '-0' : String(state) };
  }
  for (const [name, ctor] of Object.entries(TYPED)) {
    if (state instanceof ctor)
      return { $typed: name, base64: Buffer.from(state.buffer, state.byteOffset, state.byteLength).toString('base64') };
  }
  if (Array.isArray(state)) return state.map((v, k) => encodeState(v, `${path}.${k}`));
  if (typeof state === 'object' && Object.getPrototypeOf(state) === Object.prototype) {
    const out: Record<string, Json> = {};
    for (const [key, value] of Object.entries(state)) {
      if (key.startsWith('$'))
        throw new AdvantagesError('invalid_input', `estimator state keys may not start with "$" (found ${key})`, { field: path });
      out[key] = encodeState(value, `${path}.${key}`);
    }
    return out;
  }
  throw new AdvantagesError(
    'invalid_input',
    'estimator state must be JSON values, typed arrays (Float32Array, Float64Array, Int32Array, Uint8Array), arrays and plain objects',
    { field: path },
  );
}

/** The state `encodeState` wrote (after a JSON round trip): typed arrays and special numbers restored. */
export function decodeState(json: unknown, path = 'state'): EstimatorState {
  if (json === null || typeof json === 'boolean' || typeof json === 'string' || typeof json === 'number') return json;
  if (Array.isArray(json)) return json.map((v, k) => decodeState(v, `${path}.${k}`));
  if (typeof json === 'object') {
    const o = json as Record<string, unknown>;
    if (typeof o.$number === 'string') return o.$number === '-0' ? -0 : Number(o.$number);
    if (typeof o.$typed === 'string' && typeof o.base64 === 'string' && o.$typed in TYPED) {
      const ctor = TYPED[o.$typed as TypedName];
      const bytes = Buffer.from(o.base64, 'base64');
      if (bytes.byteLength % ctor.BYTES_PER_ELEMENT !== 0)
        throw new AdvantagesError('invalid_input', `a ${o.$typed} of ${bytes.byteLength} bytes`, { field: path });
      const copy = new Uint8Array(bytes); // aligned, owned
      return new ctor(copy.buffer, 0, copy.byteLength / ctor.BYTES_PER_ELEMENT);
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, decodeState(v, `${path}.${k}`)]));
  }
  throw new AdvantagesError('invalid_input', `not an encoded estimator state: ${String(json)}`, { field: path });
}
