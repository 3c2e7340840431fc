import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreError } from '@rlvr/core';
import { loadTasks, readTasks } from './datasets.js';
import type { DatasetPreset } from './presets.js';
import { TaskError } from './errors.js';
import { labelCompletion } from './label.js';
import { longChainGenerator } from './long-chain.js';
import { scaffoldOf } from './scaffold.js';

const FIX = fileURLToPath(new URL('../test/fixtures/', import.meta.url));
const fx = (name: string) => join(FIX, name);
const rawRows = async (name: string) =>
  (await readFile(fx(name), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('dataset presets on benchmark samples', () => {
  it.each([
    ['math500', 'math500.jsonl', 'unique_id'],
    ['aime', 'aime24.jsonl', 'id'],
    ['college_math', 'college_math.jsonl', 'id'],
  ] as [DatasetPreset, string, string][])('%s reads problem and answer verbatim', async (preset, file, idField) => {
    const rows = await rawRows(file);
    const tasks = await loadTasks(fx(file), preset);
    expect(tasks).toHaveLength(rows.length);
    tasks.forEach((t, i) => {
      expect(t.question).toBe(rows[i]!.problem);
      expect(t.answer).toBe(rows[i]!.answer);
      expect(t.id).toBe(String(rows[i]![idField]));
      expect(t.line).toBe(i + 1);
    });
    if (preset === 'aime') expect(tasks[7]!.answer).toBe('025'); // a string gold keeps its leading zero
  });

  it('amc stringifies float golds consistently (27.0 -> "27")', async () => {
    expect(await readFile(fx('amc23.jsonl'), 'utf8')).toContain('"answer": 27.0');
    const tasks = await loadTasks(fx('amc23.jsonl'), 'amc');
    expect(tasks.map((t) => t.answer)).toEqual(['27', '36', '45', '3159', '36', '7', '21', '3', '1', '4', '5', '29']);
    expect(tasks[0]!.question.startsWith('Cities $A$ and $B$ are $45$ miles apart.')).toBe(true);
  });

  it('minerva_math takes the last balanced box of the solution', async () => {
    const tasks = await loadTasks(fx('minerva_math.jsonl'), 'minerva_math');
    expect(tasks.map((t) => t.answer)).toEqual(['55', '2', '\\frac{3}{4}', '\\{-1, 1\\}', '3.14', '50\\%', '7', '180^\\circ', '4', '1024']);
    expect(tasks[0]!.question).toBe('What is the sum of the first $10$ positive integers?');
    expect(tasks[9]!.id).toBe('9');
  });

  it('olympiadbench joins the final_answer list', async () => {
    const tasks = await loadTasks(fx('olympiadbench.jsonl'), 'olympiadbench');
    expect(tasks.map((t) => t.answer)).toEqual([
      '$12$',
      '$2$, $3$',
      '$\\frac{5}{6}$',
      '$60$',
      '$(-1,3)$',
      '$y=2 x+1$',
      '9',
      '$5$',
      '$30$',
      '$3$, $4$',
    ]);
    expect(tasks[1]!.question).toBe('Solve $x^2-5x+6=0$.');
  });

  it('deepmath reads question and final_answer', async () => {
    const tasks = await loadTasks(fx('deepmath.jsonl'), 'deepmath');
    expect(tasks.map((t) => t.answer)).toEqual(['1', '32', '1', 'Yes', '\\{2, 3\\}']);
    expect(tasks[0]!.id).toBeUndefined();
  });

  it('gsm8k takes the text after ####, without thousands separators', async () => {
    const tasks = await loadTasks(fx('gsm8k.jsonl'), 'gsm8k');
    expect(tasks.map((t) => t.answer)).toEqual(['14', '24', '14400', '5']);
  });

  it('streams: stopping early reads no further', async () => {
    expect(await loadTasks(fx('math500.jsonl'), 'math500', 2)).toHaveLength(2);
    const it = readTasks(fx('math500.jsonl'), 'math500');
    expect((await it.next()).value!.line).toBe(1);
    await it.return(undefined);
  });
});

describe('custom mappings and bad rows', () => {
  async function file(lines: string[]): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-data-'));
    const f = join(dir, 'data.jsonl');
    await writeFile(f, lines.join('\n') + '\n');
    return f;
  }

  it('reads nested fields through a custom mapping', async () => {
    const f = await file(['{"q": {"text": "1+1?"}, "gold": 2, "key": "a"}', '', '{"q": {"text": "2+2?"}, "gold": "4", "key": 7}']);
    const tasks = await loadTasks(f, { question: 'q.text', answer: 'gold', id: 'key' });
    expect(tasks).toEqual([
      { question: '1+1?', answer: '2', line: 1, id: 'a' },
      { question: '2+2?', answer: '4', line: 3, id: '7' },
    ]);
  });

  it.each([
    ['{"problem": "x", "answer": null}', 'math500', 'field answer', 'got null'],
    ['{"answer": "3"}', 'amc', 'field problem', 'got nothing (field missing)'],
    ['{"problem": "x", "solution": "no box"}', 'minerva_math', 'field solution', 'no balanced \\boxed'],
    ['{"question": "x", "final_answer": []}', 'olympiadbench', 'field final_answer', 'non-empty list'],
    ['{"question": "x", "final_answer": ["1", null]}', 'olympiadbench', 'field final_answer.1', 'got null'],
    ['{"question": "x", "answer": "7"}', 'gsm8k', 'field answer', '"#### answer"'],
    ['{"question": "x", "final_answer": NaN}', 'olympiadbench', '', 'not JSON'],
    ['[1, 2]', 'olympiadbench', '', 'expected a JSON object'],
  ] as [string, DatasetPreset, string, string][])(
    'stops at a bad row with file, line and field: %s',
    async (bad, preset, field, message) => {
      const good =
        '{"id": 1, "unique_id": "u1", "idx": 0, "problem": "p", "question": "p", "answer": "1 #### 1", "final_answer": ["1"], "solution": "\\\\boxed{1}"}';
      const f = await file([good, good, bad, good]);
      const seen: number[] = [];
      let err: unknown;
      try {
        for await (const t of readTasks(f, preset)) seen.push(t.line);
      } catch (e) {
        err = e;
      }
      expect(seen).toEqual([1, 2]);
      // a line that is not JSON is core's reader error; a row without the fields is ours
      expect(err).toBeInstanceOf(message === 'not JSON' ? CoreError : TaskError);
      const e = err as TaskError;
      expect(e.code).toBe(message === 'not JSON' ? 'read_failed' : 'invalid_row');
      expect(e.location).toMatchObject({ file: f, line: 3 });
      expect(e.message).toContain(`${f}:3${field ? ', ' + field : ''}: `);
      expect(e.message).toContain(message);
    },
  );

  it('rejects unknown presets and bad mappings before reading', async () => {
    await expect(loadTasks('/nonexistent', 'math501' as DatasetPreset)).rejects.toThrow(
      /dataset preset.*must be one of "deepmath", "math500"/,
    );
    await expect(loadTasks('/nonexistent', { question: 'q', answer: 'a', answerFormat: 'csv' as 'value' })).rejects.toBeInstanceOf(
      CoreError,
    );
    await expect(loadTasks('/nonexistent/x.jsonl', 'math500')).rejects.toMatchObject({
      code: 'read_failed',
      location: { file: '/nonexistent/x.jsonl' },
      message: '/nonexistent/x.jsonl: cannot read: no such file',
    });
  });
});

describe('chain and scaffold fields', () => {
  it('a data file row carries its chain and scaffold; the labeller and the scaffold work from the file alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-tasks-chain-'));
    const tasks = longChainGenerator().tasks(5, 3);
    const file = join(dir, 'long.jsonl');
    await writeFile(
      file,
      tasks.map((t) => JSON.stringify({ ...t, scaffold: scaffoldOf(t.chain, { spacedDigits: true }) })).join('\n') + '\n',
    );
    const read = await loadTasks(file, 'synthetic');
    expect(read.map((t) => t.chain)).toEqual(tasks.map((t) => t.chain));
    expect(read.map((t) => t.scaffold!.subAnswers)).toEqual(tasks.map((t) => t.chain.steps.map((s) => String(s.result))));
    expect(labelCompletion(read[0]!.chain!, tasks[0]!.solution).kind).toBe('correct');
    // rows without the fields are read as before
    await writeFile(file, JSON.stringify({ question: 'q', answer: '1', solution: '\\boxed{1}' }) + '\n');
    expect((await loadTasks(file, 'synthetic'))[0]).toEqual({ question: 'q', answer: '1', solution: '\\boxed{1}', line: 1 });
  });

  it('a bad chain or scaffold names the file, line and field; nothing is read past it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-tasks-chain-'));
    const file = join(dir, 'bad.jsonl');
    const t = longChainGenerator().task(5, 0);
    const write = (row: object) =>
      writeFile(file, JSON.stringify({ question: t.question, answer: t.answer }) + '\n' + JSON.stringify(row) + '\n');
    const steps = t.chain.steps.map((s) => ({ ...s }));
    steps[1]!.result += 1;
    await write({ ...t, chain: { ...t.chain, steps } });
    const v = t.chain.steps[0]!.result;
    const s1 = t.chain.steps[1]!;
    const sym = { add: '+', sub: '-', mul: '*', div: '/' }[s1.op];
    await expect(loadTasks(file, 'synthetic')).rejects.toThrow(
      `${file}:2, field chain.steps.1.result: ${v} ${sym} ${s1.operand} = ${s1.result}, not ${s1.result + 1}`,
    );
    await write({ ...t, answer: '7' });
    await expect(loadTasks(file, 'synthetic')).rejects.toThrow(
      `${file}:2, field chain: the chain ends at ${t.answer} but the answer is "7"`,
    );
    await write({ ...t, scaffold: { subQuestions: ['a?'], subAnswers: ['1'] } });
    await expect(loadTasks(file, 'synthetic')).rejects.toThrow(
      `${file}:2, field scaffold: the scaffold has 1 sub-answers but the chain has ${t.chain.steps.length} steps`,
    );
    await write({ ...t, scaffold: { subQuestions: [`What is ${v}?`], subAnswers: [String(v)] }, chain: undefined });
    const err = await loadTasks(file, 'synthetic').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskError);
    expect((err as TaskError).message).toBe(
      `${file}:2, field scaffold.subQuestions.0: sub-question 1 ("What is ${v}?") shows sub-answer 1 (${v}): the sub-answers must stay hidden`,
    );
  });
});
