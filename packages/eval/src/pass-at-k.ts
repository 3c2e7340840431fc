/**
 * The unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models
 * Trained on Code"): with n samples of which c are correct,
 * `pass@k = 1 - C(n - c, k) / C(n, k)`, the probability that k samples drawn
 * without replacement from the n contain a correct one. Computed as a product
 * `1 - prod_{i = n-c+1}^{n} (1 - k / i)` so that large n does not overflow.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k))
    throw new RangeError(`passAtK: n, c and k must be integers, got n=${n} c=${c} k=${k}`);
  if (n < 1 || k < 1 || k > n || c < 0 || c > n)
    throw new RangeError(`passAtK: need 1 <= k <= n and 0 <= c <= n, got n=${n} c=${c} k=${k}`);
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/** Mean of `passAtK` over problems; `correct[p]` of `n` samples of problem p were correct. */
export function meanPassAtK(correct: readonly number[], n: number, k: number): number {
  if (correct.length === 0) return Number.NaN;
  let s = 0;
  for (const c of correct) s += passAtK(n, c, k);
  return s / correct.length;
}
