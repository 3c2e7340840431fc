import { batchFromRows, Rng, type RolloutBatch, type RolloutRowInput } from '@rlvr/core';
import { parseModelConfig } from '@rlvr/policy';

/** The tiny decoder of the trainer's tests. */
export const tinyConfig = parseModelConfig({
  vocab_size: 40,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  max_position_embeddings: 64,
});

/** `groups` groups of `size` rollouts with random prompts, completions and 0/1 rewards. */
export function makeBatch(seed = 1, groups = 3, size = 4): RolloutBatch {
  const rng = new Rng(seed);
  const rows: RolloutRowInput[] = [];
  for (let g = 0; g < groups; g++) {
    const prompt = Array.from({ length: 2 + rng.int(4) }, () => 1 + rng.int(39));
    for (let k = 0; k < size; k++) {
      rows.push({ group: g, prompt, completion: Array.from({ length: 1 + rng.int(7) }, () => 1 + rng.int(39)), reward: rng.int(2) });
    }
  }
  return batchFromRows(rows);
}

/** Sequence advantage (reward - group mean) broadcast over each completion. */
export function advantagesOf(batch: RolloutBatch): Float32Array {
  const out = new Float32Array(batch.completionTokens.length);
  for (let i = 0; i < batch.numRollouts; i++) {
    let s = 0;
    let n = 0;
    for (let j = 0; j < batch.numRollouts; j++)
      if (batch.groupIndex[j] === batch.groupIndex[i]) {
        s += batch.rewards[j]!;
        n++;
      }
    out.fill(batch.rewards[i]! - s / n, batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!);
  }
  return out;
}
