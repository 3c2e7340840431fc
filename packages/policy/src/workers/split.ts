import type { RolloutBatch } from '@rlvr/core';

/**
 * `rows` cut into `n` contiguous chunks (in the order given) of about equal padded length (prompt +
 * completion tokens): one per worker, some empty when there are fewer rows than workers. Depends
 * on the data and `n` only, never on timing.
 */
export function splitRollouts(batch: RolloutBatch, rows: readonly number[], n: number): number[][] {
  const cost = rows.map(
    (i) => batch.promptOffsets[i + 1]! - batch.promptOffsets[i]! + batch.completionOffsets[i + 1]! - batch.completionOffsets[i]!,
  );
  const total = cost.reduce((a, b) => a + b, 0);
  const chunks: number[][] = Array.from({ length: n }, () => []);
  let acc = 0;
  rows.forEach((row, k) => {
    // the chunk this row's midpoint falls in: contiguous, in order, balanced by length
    const w = Math.min(n - 1, Math.floor(((acc + cost[k]! / 2) * n) / Math.max(total, 1)));
    chunks[w]!.push(row);
    acc += cost[k]!;
  });
  return chunks;
}
