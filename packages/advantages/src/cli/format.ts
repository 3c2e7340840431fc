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

/**
 * `[a,b,...]` of float32 values in the shortest round-trip form. [n] -> JSON text. Equal neighbours are
 * formatted once: a row of a uniform-weighted estimator is one value repeated, and finding the shortest decimal
 * (up to four `toPrecision` calls) is most of the cost of writing it.
 */
export function formatFloat32Array(values: Float32Array, start: number, end: number): string {
  const parts: string[] = [];
  let t = start;
  while (t < end) {
    const v = values[t]!;
    let k = t + 1;
    while (k < end && values[k] === v) k++; // NaN equals nothing: each NaN is a run of one
    const text = formatFloat32(v);
    parts.push(k - t === 1 ? text : (text + ',').repeat(k - t - 1) + text);
    t = k;
  }
  return '[' + parts.join(',') + ']';
}
