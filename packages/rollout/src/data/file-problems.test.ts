import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fileProblems, splitFileProblems } from './file-problems.js';
import { splitHeldOut } from './problems.js';

const dir = mkdtempSync(join(tmpdir(), 'file-problems-'));
const chain = { start: 3, steps: [{ op: 'add', operand: 4, result: 7 }] };
const scaffold = { subQuestions: ['What is 3 + 4?'], subAnswers: ['7'] };

describe('fileProblems', () => {
  test('each row with its solution, scaffold and chain (as aux) and its file and line', async () => {
    const file = join(dir, 'rows.jsonl');
    const rows = [
      { question: 'q1', answer: '1' },
      { question: 'q2', answer: '7', solution: 's', chain, scaffold },
    ];
    writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    expect(await fileProblems(file, 'synthetic')).toEqual([
      { question: 'q1', answer: '1', source: { file, line: 1 } },
      { question: 'q2', answer: '7', solution: 's', aux: { scaffold, chain }, source: { file, line: 2 } },
    ]);
  });
});

describe('splitFileProblems', () => {
  const problems = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ question: `${tag}${i}`, answer: String(i) }));
  const warnings = () => {
    const said: string[] = [];
    return { said, logger: { warn: (m: string) => void said.push(m) } };
  };

  test('without an eval file, a seeded draw is held out; with one, its first rows; a small file is warned about', () => {
    const all = problems(10, 'q');
    const sizes = { train: 't.jsonl', problems: 4, seed: 9, prompts: 8 };
    const w = warnings();
    expect(splitFileProblems(all, undefined, sizes, w.logger)).toEqual(splitHeldOut(all, 4, 9));
    expect(w.said).toEqual(['t.jsonl has 6 training problems, fewer than rollout.prompts = 8: every step repeats some']);
    const evalRows = problems(3, 'e');
    const v = warnings();
    expect(splitFileProblems(all, evalRows, { ...sizes, eval: 'e.jsonl', prompts: 2 }, v.logger)).toEqual({
      heldOut: evalRows,
      train: all,
    });
    expect(v.said).toEqual(['eval.problems is 4 but e.jsonl has 3 rows: evaluating 3']);
  });

  test('nothing left to train on, or to evaluate, names the field', () => {
    const sizes = { train: 't.jsonl', problems: 4, seed: 0, prompts: 1 };
    expect(() => splitFileProblems(problems(3, 'q'), undefined, sizes)).toThrow(
      'data.train: t.jsonl has 3 problems, all held out for evaluation: lower eval.problems or give data.eval',
    );
    expect(() => splitFileProblems(problems(3, 'q'), undefined, sizes)).toThrow(
      expect.objectContaining({ code: 'invalid_config', location: { field: 'data.train' } }),
    );
    expect(() => splitFileProblems(problems(3, 'q'), [], { ...sizes, eval: 'e.jsonl' })).toThrow(
      expect.objectContaining({ code: 'invalid_config', location: { field: 'data.eval' } }),
    );
  });
});
