import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longChainGenerator, syntheticGenerator } from '@rlvr/tasks';
import { expect, test } from 'vitest';
import { writeHeldOut } from './run-held-out.js';

test("a run of the long-chain family: its held-out problems are that family's eval.seed stream, with its options", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rlvr-held-out-'));
  try {
    const questions = async (config: object) => {
      await writeFile(join(dir, 'config.json'), JSON.stringify(config));
      await writeHeldOut(dir, join(dir, 'held.jsonl'));
      return (await readFile(join(dir, 'held.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { question: string }).question);
    };
    const eval_ = { seed: 11, problems: 5 };
    expect(await questions({ family: 'long-chain', longChain: { maxSteps: 5 }, eval: eval_ })).toEqual(
      longChainGenerator({ maxSteps: 5 })
        .tasks(11, 5)
        .map((t) => t.question),
    );
    // no family (a run from before families): the short task, as before
    expect(await questions({ task: { minSteps: 1, maxSteps: 2, digits: 1 }, eval: eval_ })).toEqual(
      syntheticGenerator({ minSteps: 1, maxSteps: 2, digits: 1 })
        .tasks(11, 5)
        .map((t) => t.question),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
