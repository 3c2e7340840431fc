import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { chainProblems, configChainSource } from './chain-tasks.js';
import { longChainGenerator } from './long-chain.js';

const dir = mkdtempSync(join(tmpdir(), 'chain-tasks-'));

describe('chainProblems', () => {
  test('a family: the generator’s first tasks of the stream, with their chains', async () => {
    const got = await chainProblems({ family: 'long-chain', seed: 7 }, 3);
    expect(got).toEqual(longChainGenerator().tasks(7, 3));
    expect(got[0]!.chain.steps.length).toBeGreaterThanOrEqual(4);
  });

  test('a data file: its first rows with their chains; a row without one, or too few rows, named', async () => {
    const task = longChainGenerator().task(1, 0);
    const row = { question: task.question, answer: task.answer, chain: task.chain };
    const file = join(dir, 'rows.jsonl');
    writeFileSync(file, `${JSON.stringify(row)}\n${JSON.stringify({ question: 'q', answer: '1' })}\n`);
    const [first] = await chainProblems({ file, format: 'synthetic' }, 1);
    expect(first).toEqual({ question: task.question, answer: task.answer, chain: task.chain });
    await expect(chainProblems({ file, format: 'synthetic' }, 2)).rejects.toMatchObject({
      code: 'invalid_row',
      location: { file, line: 2, field: 'chain' },
    });
    await expect(chainProblems({ file, format: 'synthetic' }, 2)).rejects.toThrow(
      "no chain: the first-error labeller needs each problem's chain",
    );
    await expect(chainProblems({ file, format: 'synthetic' }, 3)).rejects.toThrow('has 2 problems; 3 are needed');
  });
});

describe('configChainSource', () => {
  test('a config with data reads its training file; else its family, with that family’s options', () => {
    const data = { train: 'rows.jsonl', format: 'gsm8k' as const };
    expect(configChainSource({ data, family: 'long-chain', longChain: { minSteps: 5 } }, 3)).toEqual({
      file: 'rows.jsonl',
      format: 'gsm8k',
    });
    expect(configChainSource({ family: 'long-chain', longChain: { minSteps: 5 }, task: { digits: 2 } }, 3)).toEqual({
      family: 'long-chain',
      options: { minSteps: 5 },
      seed: 3,
    });
    expect(configChainSource({ family: 'arith', longChain: { minSteps: 5 }, task: { digits: 2 } }, 4)).toEqual({
      family: 'arith',
      options: { digits: 2 },
      seed: 4,
    });
  });
});
