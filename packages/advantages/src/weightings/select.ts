/**
 * The k-th smallest (0-indexed) of `bits[start .. start + n)` read as unsigned
 * integers, by three rounds of radix selection on 11, 11 and 10 bits: O(n), no
 * data-dependent swaps. For the bit patterns of non-negative float32 values
 * (sign bit clear, not NaN) the unsigned order is the numeric order, so this is
 * the k-th smallest float. `counts` (>= 2048 entries) and `candidates` (>= n)
 * are scratch.
 */
export function selectKthBits(bits: Uint32Array, start: number, n: number, k: number, counts: Int32Array, candidates: Uint32Array): number {
  counts.fill(0, 0, 2048);
  const end = start + n;
  for (let t = start; t < end; t++) counts[bits[t]! >>> 21]!++;
  let high = 0;
  while (k >= counts[high]!) k -= counts[high++]!;
  let m = 0;
  for (let t = start; t < end; t++) {
    const x = bits[t]!;
    if (x >>> 21 === high) candidates[m++] = x;
  }
  counts.fill(0, 0, 2048);
  for (let j = 0; j < m; j++) counts[(candidates[j]! >>> 10) & 0x7ff]!++;
  let mid = 0;
  while (k >= counts[mid]!) k -= counts[mid++]!;
  let m2 = 0;
  for (let j = 0; j < m; j++) {
    const x = candidates[j]!;
    if (((x >>> 10) & 0x7ff) === mid) candidates[m2++] = x;
  }
  counts.fill(0, 0, 1024);
  for (let j = 0; j < m2; j++) counts[candidates[j]! & 0x3ff]!++;
  let low = 0;
  while (k >= counts[low]!) k -= counts[low++]!;
  return ((high << 21) | (mid << 10) | low) >>> 0;
}
