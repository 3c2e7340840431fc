/**
 * The k-th smallest of `values[0 .. n)` (0-indexed), found in place by
 * quickselect (Hoare partition, median-of-three pivot): O(n) on average, no
 * allocation. Reorders `values[0 .. n)`. Values must not be NaN.
 */
export function selectKth(values: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    // median of three into values[mid], so the pivot is never an extreme of the three
    if (values[mid]! < values[lo]!) swap(values, mid, lo);
    if (values[hi]! < values[lo]!) swap(values, hi, lo);
    if (values[hi]! < values[mid]!) swap(values, hi, mid);
    const pivot = values[mid]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        swap(values, i, j);
        i++;
        j--;
      }
    }
    // now values[lo..j] <= pivot <= values[i..hi], and values[j+1..i-1] == pivot
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return values[k]!;
  }
  return values[k]!;
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
}
