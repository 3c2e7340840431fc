/**
 * The shortest decimal that reads back as the same float32 (`0.3`, not
 * `0.30000001192092896`): float32 values printed as doubles carry digits that
 * mean nothing. Tries 6 to 9 significant digits; 9 always round-trips.
 */
export function formatFloat32(v: number): string {
  if (v === 0) return '0';
  if (!Number.isFinite(v)) return 'null'; // JSON has no NaN or Infinity
  for (let p = 6; p < 9; p++) {
    const n = Number(v.toPrecision(p));
    if (Math.fround(n) === v) return String(n);
  }
  return String(Number(v.toPrecision(9)));
}

/** `[a,b,...]` of float32 values in the shortest round-trip form. [n] -> JSON text */
export function formatFloat32Array(values: Float32Array, start: number, end: number): string {
  let s = '[';
  for (let t = start; t < end; t++) {
    if (t > start) s += ',';
    s += formatFloat32(values[t]!);
  }
  return s + ']';
}
