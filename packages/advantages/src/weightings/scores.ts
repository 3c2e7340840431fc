import { AdvantagesError } from '../errors.js';

/**
 * Throw for a saliency score the log cannot take: NaN, infinite or negative.
 * `t` is the token index within rollout `rollout`'s completion.
 */
export function badScore(signal: string, rollout: number, t: number, value: number): never {
  throw new AdvantagesError(
    'invalid_signal',
    `score of completion token ${t} is ${value}; saliency scores must be finite and >= 0`,
    { rollout, field: signal },
  );
}

/** Longest completion in the batch: the size of per-rollout scratch buffers. */
export function maxCompletionLength(offsets: Int32Array, numRollouts: number): number {
  let m = 0;
  for (let i = 0; i < numRollouts; i++) {
    const n = offsets[i + 1]! - offsets[i]!;
    if (n > m) m = n;
  }
  return m;
}

/**
 * ln(1 + x) for x >= 0, as accurate as `Math.log1p` (a few ulps, also for tiny x)
 * but faster in V8: with u = 1 + x rounded, ln(1 + x) = ln(u) * x / (u - 1)
 * (Goldberg, "What every computer scientist should know about floating-point
 * arithmetic", 1991, Theorem 4). `Math.log1p` is its slow, obviously-correct twin.
 */
export function log1p(x: number): number {
  const u = 1 + x;
  return u === 1 ? x : (Math.log(u) * x) / (u - 1);
}
