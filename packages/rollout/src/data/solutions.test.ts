import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { prunedTokenizer, prunedVocab } from '@rlvr/policy/tokenizer';
import { totalTokens } from '@rlvr/core';
import { loadTasks, syntheticGenerator, type DatasetPreset } from '@rlvr/tasks';
import { toPromptTasks } from './problems.js';
import { promptBuilder } from './prompt.js';
import { sampleGroups } from '../samplers/sample-groups.js';
import type { Sampler } from '../samplers/sampler.js';

const fx = (name: string) => fileURLToPath(new URL(`../../test/fixtures/${name}`, import.meta.url));
const rows = async (name: string) =>
  (await readFile(fx(name), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('solutions from the dataset presets', () => {
  it.each([
    ['math500', 'math500.jsonl', 'solution'],
    ['minerva_math', 'minerva_math.jsonl', 'solution'],
    ['gsm8k', 'gsm8k.jsonl', 'answer'],
  ] as [DatasetPreset, string, string][])('%s reads the worked solution from field %s', async (preset, file, field) => {
    const raw = await rows(file);
    const tasks = await loadTasks(fx(file), preset);
    tasks.forEach((t, i) => expect(t.solution).toBe(raw[i]![field]));
  });

  it('a row without the solution field has none; a non-text one is an error naming file, line and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-solutions-'));
    const file = join(dir, 'rows.jsonl');
    await writeFile(
      file,
      '{"problem": "a", "answer": "1", "unique_id": "u1"}\n{"problem": "b", "answer": "2", "unique_id": "u2", "solution": 7}\n',
    );
    await expect(loadTasks(file, 'math500', 1)).resolves.toEqual([{ question: 'a', answer: '1', line: 1, id: 'u1' }]);
    await expect(loadTasks(file, 'math500')).rejects.toThrow(`${file}:2, field solution: expected a non-empty string solution, got 7`);
    expect((await loadTasks(fx('aime24.jsonl'), 'aime', 1))[0]!.solution).toBeUndefined();
  });
});

describe('references from problem to batch', () => {
  const gen = syntheticGenerator({});
  const problems = gen.tasks(3, 2);
  const tokenizer = prunedTokenizer(
    prunedVocab(
      'cl100k_base',
      [...problems.flatMap((p) => [p.question, p.solution]), 'Please reason step by step, and put your final answer within \\boxed{}.'],
      ['<|endoftext|>'],
    ),
  );

  it('toPromptTasks tokenises the solution as plain text; sampleGroups gives it to every rollout of its group', async () => {
    const tasks = toPromptTasks([problems[0]!, { question: 'no solution here', answer: '1' }], tokenizer, promptBuilder());
    expect(tokenizer.decode(tasks[0]!.reference!)).toBe(problems[0]!.solution);
    expect(tasks[1]!.reference).toBeUndefined();
    // a sampler that answers every prompt with its own first token, G times
    const sampler: Sampler = {
      name: 'echo',
      sample: async (requests) =>
        requests.map((r) => ({
          promptTokens: [...(r.prompt.tokens ?? [])],
          completions: Array.from({ length: r.n }, () => ({ tokens: [r.prompt.tokens![0]!], finish: 'stop' as const })),
        })),
    };
    const { batch } = await sampleGroups(
      tasks.map((t) => ({ tokens: t.prompt, ...(t.reference && { reference: t.reference }) })),
      sampler,
      { groupSize: 3, maxNewTokens: 4 },
    );
    const S = tasks[0]!.reference!.length;
    expect(Array.from(batch.referenceOffsets!)).toEqual([0, S, 2 * S, 3 * S, 3 * S, 3 * S, 3 * S]);
    for (let i = 0; i < 3; i++) expect(Array.from(batch.referenceTokens!.subarray(i * S, (i + 1) * S))).toEqual(tasks[0]!.reference);
    expect(totalTokens(batch)).toBe(6);
    const without = await sampleGroups([{ tokens: tasks[1]!.prompt }], sampler, { groupSize: 2, maxNewTokens: 4 });
    expect(without.batch.referenceTokens).toBeUndefined();
  });
});
