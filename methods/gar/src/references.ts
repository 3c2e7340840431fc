import { CoreError, referenceOf, type RolloutBatch } from '@rlvr/core';

/** The rollouts of each group, in batch order, with the group's reference solution (checked: one per group, a prompt each). */
export function groupsWithReferences(batch: RolloutBatch, neededBy: string): { rows: number[]; reference: Int32Array }[] {
  const byGroup = new Map<number, number[]>();
  for (let i = 0; i < batch.numRollouts; i++) {
    const g = batch.groupIndex[i]!;
    byGroup.set(g, [...(byGroup.get(g) ?? []), i]);
  }
  return [...byGroup.values()].map((rows) => {
    const reference = referenceOf(batch, rows[0]!, neededBy);
    for (const i of rows) {
      const own = referenceOf(batch, i, neededBy);
      if (own.length !== reference.length || own.some((v, k) => v !== reference[k]))
        throw new CoreError('invalid_batch', `the rollouts of group ${batch.groupIndex[i]} carry different reference solutions`, {
          rollout: i,
          field: 'referenceTokens',
        });
      if (batch.promptOffsets[i + 1]! === batch.promptOffsets[i]!)
        throw new CoreError('invalid_batch', 'prompt is empty: the first completion token needs at least one token of context', {
          rollout: i,
          field: 'prompt',
        });
    }
    return { rows, reference };
  });
}

/** A batch of the references: row k is rollout `firsts[k]`'s prompt with `references[k]` as its completion. */
export function referenceBatch(batch: RolloutBatch, firsts: readonly number[], references: readonly Int32Array[]): RolloutBatch {
  const n = firsts.length;
  const prompts = firsts.map((i) => batch.promptTokens.subarray(batch.promptOffsets[i]!, batch.promptOffsets[i + 1]!));
  const offsets = (parts: readonly Int32Array[]) => {
    const o = new Int32Array(n + 1);
    parts.forEach((p, k) => (o[k + 1] = o[k]! + p.length));
    return o;
  };
  const concat = (parts: readonly Int32Array[], o: Int32Array) => {
    const out = new Int32Array(o[n]!);
    parts.forEach((p, k) => out.set(p, o[k]!));
    return out;
  };
  const po = offsets(prompts);
  const co = offsets(references);
  return {
    numRollouts: n,
    groupIndex: Int32Array.from({ length: n }, (_, k) => k),
    promptTokens: concat(prompts, po),
    promptOffsets: po,
    completionTokens: concat(references, co),
    completionOffsets: co,
    rewards: new Float32Array(n),
    finish: new Uint8Array(n),
    spans: new Int32Array(n * 6).fill(-1),
  };
}
