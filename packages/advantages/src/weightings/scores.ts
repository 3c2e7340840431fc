import { AdvantagesError } from '../errors.js';

/**
 * Throw for a saliency score the log cannot take: NaN, infinite or negative.
 * `t` is the token index within rollout `rollout`'s completion.
 */
export function badScore(signal: string, rollout: number, t: number, value: number): never {
  throw new AdvantagesError('invalid_signal', `score of completion token ${t} is ${value}; saliency scores must be finite and >= 0`, {
    rollout,
    field: signal,
  });
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
