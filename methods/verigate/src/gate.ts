import { AdvantagesError } from '@rlvr/advantages';
import type { RolloutBatch } from '@rlvr/core';

/**
 * VeriGate's degenerate-group step advantages. For each group whose rewards are all equal (all right
 * or all wrong, where GRPO gives 0), rollout i's step k gets the continuation-aware reward
 * R[i,k] = sum_{j >= k} s[i,j] (the scores of this step and every later one), the R of the group's steps
 * are normalised together, (R - mean) / (std + eps) (population std), and every token of step k gets
 * it; tokens after a rollout's last step get 0, as does a group with under 2 steps. Other groups'
 * tokens are left as they are in `out`. `steps` is `[B, width]`: (token end, score) pairs, -1-padded.
 * Returns the number of groups it wrote. Computed in float64, rounded once to float32.
 */
export function gateDegenerate(batch: RolloutBatch, steps: Float32Array, width: number, eps: number, out: Float32Array): number {
  const o = batch.completionOffsets;
  const K = width / 2;
  const byGroup = new Map<number, number[]>();
  for (let i = 0; i < batch.numRollouts; i++) {
    const g = batch.groupIndex[i]!;
    byGroup.set(g, [...(byGroup.get(g) ?? []), i]);
  }
  let written = 0;
  for (const rows of byGroup.values()) {
    const r0 = batch.rewards[rows[0]!]!;
    if (!rows.every((i) => batch.rewards[i] === r0)) continue;
    written++;
    const R: number[][] = rows.map((i) => {
      const len = o[i + 1]! - o[i]!;
      const ends: number[] = [];
      const s: number[] = [];
      for (let k = 0; k < K && steps[(i * K + k) * 2]! >= 0; k++) {
        const end = steps[(i * K + k) * 2]!;
        if (end > len || (ends.length > 0 && end < ends[ends.length - 1]!))
          throw new AdvantagesError(
            'invalid_signal',
            `process.steps: step ${k} ends at token ${end}, outside 0..${len} or before the previous step`,
            {
              rollout: i,
              field: 'process.steps',
            },
          );
        ends.push(end);
        s.push(steps[(i * K + k) * 2 + 1]!);
      }
      const cont = new Array<number>(s.length);
      for (let k = s.length - 1, acc = 0; k >= 0; k--) cont[k] = acc += s[k]!;
      return [...ends, ...cont];
    });
    const all = R.flatMap((x) => x.slice(x.length / 2));
    const mean = all.reduce((a, b) => a + b, 0) / Math.max(1, all.length);
    const std = Math.sqrt(all.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, all.length));
    rows.forEach((i, n) => {
      const half = R[n]!.length / 2;
      out.fill(0, o[i]!, o[i + 1]!);
      if (all.length < 2) return;
      let start = 0;
      for (let k = 0; k < half; k++) {
        const end = R[n]![k]!;
        out.fill((R[n]![half + k]! - mean) / (std + eps), o[i]! + start, o[i]! + end);
        start = end;
      }
    });
  }
  return written;
}
