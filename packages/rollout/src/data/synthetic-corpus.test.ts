import { describe, expect, test } from 'vitest';
import { SyntheticCorpus } from './synthetic-corpus.js';
import { SyntheticOptionsSchema } from '@rlvr/tasks';

const EASY = SyntheticOptionsSchema.parse({ minSteps: 1, maxSteps: 2, digits: 1 });
const heldOut = { seed: 0x5eed0e, problems: 16, options: EASY };

describe('SyntheticCorpus', () => {
  test('rows are prompt + worked solution + EOS in its pruned vocabulary; held-out questions never train; the same seed, the same rows', () => {
    const a = new SyntheticCorpus(3, EASY, heldOut, 200);
    const batch = a.nextBatch(64);
    const held = new Set(a.heldOut.map((t) => t.question));
    expect(batch.filter((t) => held.has(t.question))).toEqual([]);
    expect(a.cursor).toBeGreaterThanOrEqual(64);
    for (const row of batch) {
      expect(row.completion.at(-1)).toBe(a.eosId);
      expect(a.tokenizer.decode(row.prompt)).toBe(a.prompts.text(row.question));
      expect(a.tokenizer.decode(row.completion.slice(0, -1))).toMatch(new RegExp(`\\\\boxed\\{${row.answer}\\}$`));
    }
    expect(a.tokenizer.vocabSize).toBeLessThan(2000);
    const b = new SyntheticCorpus(3, EASY, heldOut, 200);
    expect(b.nextBatch(64)).toEqual(batch);
    expect(new SyntheticCorpus(4, EASY, heldOut, 200).nextBatch(8)).not.toEqual(batch.slice(0, 8));
  });
});
