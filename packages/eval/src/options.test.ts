import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CoreError, isRlvrError } from '@rlvr/core';
import type { RlvrError } from '@rlvr/core';
import { PRESET_NAMES } from './command.js';
import { datasetsOf, parseLayout } from './datasets-of.js';
import { baseUrlOf } from './engines.js';
import { EvaluationError } from './errors.js';
import { datasetNames, parseEvalOptions } from './options.js';
import { DATASET_PRESETS, guessPreset, resolvePreset } from '@rlvr/tasks';
import { problemSeed } from './run.js';

describe('presets', () => {
  test('the benchmark names are aliases of the @rlvr/tasks presets; the presets themselves are accepted', () => {
    expect(['math500', 'aime24', 'amc23', 'minerva', 'college', 'olympiad', 'synthetic'].map(resolvePreset)).toEqual([
      'math500',
      'aime',
      'amc',
      'minerva_math',
      'college_math',
      'olympiadbench',
      'synthetic',
    ]);
    expect(resolvePreset('gsm8k')).toBe('gsm8k');
    expect(resolvePreset('minerva_math')).toBe('minerva_math');
    expect(resolvePreset('aime25')).toBeUndefined();
    expect(resolvePreset('toString')).toBeUndefined();
  });

  test('guessed from the file names of the reference evaluation data: the file name, then its directory, no further', () => {
    expect(guessPreset('data/MATH/Math-OAI.jsonl')).toBe('math500');
    expect(guessPreset('math500.jsonl')).toBe('math500');
    expect(guessPreset('data/AIME24/test.jsonl')).toBe('aime');
    expect(guessPreset('data/AMC23/test.jsonl')).toBe('amc');
    expect(guessPreset('data/College_Math/college_math_200.jsonl')).toBe('college_math');
    expect(guessPreset('data/Minerva-MATH/minerva-math.jsonl')).toBe('minerva_math');
    expect(guessPreset('data/OlympiadBench/olympiadbench_200.jsonl')).toBe('olympiadbench');
    expect(guessPreset('fixtures/eval/synthetic-16.jsonl')).toBe('synthetic');
    expect(guessPreset('gsm8k/test.jsonl')).toBe('gsm8k');
    expect(guessPreset('aime/minerva.jsonl')).toBe('minerva_math');
    expect(guessPreset('data/problems.jsonl')).toBeUndefined();
    expect(guessPreset('/home/amcdonald/data/problems.jsonl')).toBeUndefined();
  });

  test("the usage's preset list is @rlvr/tasks' presets", () => {
    expect([...PRESET_NAMES]).toEqual(Object.keys(DATASET_PRESETS));
  });

  test('table names: the benchmark name, repeats told apart by file name, then by number', () => {
    expect(
      datasetNames([
        { file: 'a/aime.jsonl', preset: 'aime' },
        { file: 'm.jsonl', preset: 'minerva_math' },
        { file: 'g.jsonl', preset: 'gsm8k' },
      ]),
    ).toEqual(['aime24', 'minerva', 'gsm8k']);
    expect(
      datasetNames([
        { file: 'x/easy.jsonl', preset: 'synthetic' },
        { file: 'y/hard.jsonl', preset: 'synthetic' },
      ]),
    ).toEqual(['synthetic:easy', 'synthetic:hard']);
    expect(
      datasetNames([
        { file: 'x/t.jsonl', preset: 'amc' },
        { file: 'y/t.jsonl', preset: 'amc' },
      ]),
    ).toEqual(['amc23:t#1', 'amc23:t#2']);
    // a field mapping is named by its file
    const fields = { question: 'q', answer: 'a', answerFormat: 'value' as const };
    expect(
      datasetNames([
        { file: 'data/my-test.jsonl', fields },
        { file: 'b/my-test.jsonl', fields },
      ]),
    ).toEqual(['my-test#1', 'my-test#2']);
  });
});

describe('datasetsOf (the --dataset / --preset pairing)', () => {
  let dir: string;
  let a: string;
  let b: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rlvr-eval-opts-'));
    a = join(dir, 'AIME24.jsonl');
    b = join(dir, 'mine.jsonl');
    await writeFile(a, '');
    await writeFile(b, '');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const usageError = (f: () => unknown): RlvrError => {
    try {
      f();
    } catch (err) {
      expect(isRlvrError(err)).toBe(true);
      return err as RlvrError;
    }
    throw new Error('expected a throw');
  };

  test('one preset for all files, one per file, or guessed', () => {
    expect(datasetsOf([a, b], ['math500'])).toEqual([
      { file: a, preset: 'math500' },
      { file: b, preset: 'math500' },
    ]);
    expect(datasetsOf([a, b], ['aime24', 'olympiad'])).toEqual([
      { file: a, preset: 'aime' },
      { file: b, preset: 'olympiadbench' },
    ]);
    expect(datasetsOf([a], [])).toEqual([{ file: a, preset: 'aime' }]);
  });

  test('usage errors name the problem: no guess, unknown preset, a count that does not pair; a missing file comes first', () => {
    const noGuess = usageError(() => datasetsOf([a, b], []));
    expect(noGuess).toBeInstanceOf(CoreError);
    expect(noGuess.code).toBe('usage');
    expect(noGuess.message).toBe(
      `cannot tell the layout of ${b} from its name: pass --preset (deepmath, math500, aime (or aime24), amc (or amc23), college_math (or college), minerva_math (or minerva), olympiadbench (or olympiad), gsm8k, synthetic, or a field mapping)`,
    );
    expect(usageError(() => datasetsOf([a], ['aime2024'])).message).toBe(
      '--preset: unknown preset "aime2024": the presets are deepmath, math500, aime (or aime24), amc (or amc23), college_math (or college), minerva_math (or minerva), olympiadbench (or olympiad), gsm8k, synthetic, or a field mapping {"question": ..., "answer": ...}',
    );
    expect(usageError(() => datasetsOf([a, b, a], ['aime24', 'amc23'])).message).toMatch(/^2 --preset for 3 --dataset/);
    const missing = usageError(() => datasetsOf([join(dir, 'nope.jsonl')], []));
    expect(missing).toBeInstanceOf(EvaluationError);
    expect(missing.code).toBe('missing_file');
    expect(missing.message).toBe(`${join(dir, 'nope.jsonl')}: dataset not found`);
  });

  test('a field mapping, as rlvr train reads it in data.format, with its defaults; a bad one names the field', () => {
    expect(datasetsOf([a, b], ['{"question": "problem", "answer": "solution", "answerFormat": "last_boxed"}', 'gsm8k'])).toEqual([
      { file: a, fields: { question: 'problem', answer: 'solution', answerFormat: 'last_boxed' } },
      { file: b, preset: 'gsm8k' },
    ]);
    expect(parseLayout(' {"question": "q", "answer": "a", "id": "uid"}')).toEqual({
      fields: { question: 'q', answer: 'a', answerFormat: 'value', id: 'uid' },
    });
    const bad = usageError(() => parseLayout('{"question": "q"}'));
    expect(bad.code).toBe('usage');
    expect(bad.message).toMatch(/^--preset: invalid dataset field mapping configuration: answer: /);
    expect(usageError(() => parseLayout('{"question": "q", "answer": "a", "answerFormat": "last"}')).message).toMatch(
      /answerFormat: must be one of "value", "last_boxed", "after_hashes", "list" \(got "last"\)/,
    );
    expect(usageError(() => parseLayout('{"question": ')).message).toMatch(/^--preset: a field mapping must be a JSON object: /);
  });
});

describe('parseEvalOptions', () => {
  const datasets = [{ file: 'd.jsonl', preset: 'synthetic' as const }];

  test('the reference protocol by default', () => {
    expect(parseEvalOptions({ model: 'm', datasets })).toMatchObject({
      n: 3,
      temperature: 0.6,
      topP: 0.95,
      topK: 20,
      seed: 0,
      chat: false,
      maxQuestionChars: 100_000,
    });
  });

  test('a dataset has exactly one layout', () => {
    expect(() => parseEvalOptions({ model: 'm', datasets: [{ file: 'd.jsonl' }] })).toThrow(
      /datasets\.0\.preset: give exactly one of preset .* and fields/,
    );
    expect(() =>
      parseEvalOptions({ model: 'm', datasets: [{ file: 'd.jsonl', preset: 'gsm8k', fields: { question: 'q', answer: 'a' } }] }),
    ).toThrow(/give exactly one/);
  });

  test('exactly one of model and endpoint; endpoint-only options refused with a model', () => {
    expect(() => parseEvalOptions({ datasets })).toThrow(/model: give exactly one of model/);
    expect(() => parseEvalOptions({ model: 'm', endpoint: 'http://x/v1', datasets })).toThrow(/give exactly one/);
    expect(() => parseEvalOptions({ model: 'm', datasets, chat: true })).toThrow(/chat: only with endpoint/);
    expect(() => parseEvalOptions({ model: 'm', datasets, stream: true })).toThrow(/stream: only with endpoint/);
    expect(() => parseEvalOptions({ model: 'm', datasets, tokenIds: true })).toThrow(/tokenIds: only with endpoint/);
    // an endpoint renders the model's template with its /tokenize
    expect(parseEvalOptions({ endpoint: 'http://x/v1', datasets, template: 'model' }).template).toBe('model');
    expect(() => parseEvalOptions({ endpoint: 'ftp://x/v1', datasets })).toThrow(/endpoint/);
    expect(() => parseEvalOptions({ model: 'm', datasets: [] })).toThrow(/datasets/);
    expect(() => parseEvalOptions({ model: 'm', datasets, nope: 1 })).toThrow(/nope/);
  });
});

test('the base URL gets /v1 when it has no path', () => {
  expect(baseUrlOf('http://127.0.0.1:8000')).toBe('http://127.0.0.1:8000/v1');
  expect(baseUrlOf('http://127.0.0.1:8000/')).toBe('http://127.0.0.1:8000/v1');
  expect(baseUrlOf('http://h:1/v1/')).toBe('http://h:1/v1');
  expect(baseUrlOf('https://h/api/openai/v1')).toBe('https://h/api/openai/v1');
});

test('a problem seed depends on the run seed and the question only', () => {
  expect(problemSeed(0, 'q')).toBe(problemSeed(0, 'q'));
  expect(problemSeed(0, 'q')).not.toBe(problemSeed(1, 'q'));
  expect(problemSeed(0, 'q')).not.toBe(problemSeed(0, 'r'));
  expect(Number.isInteger(problemSeed(5, 'q')) && problemSeed(5, 'q') >= 0 && problemSeed(5, 'q') < 2 ** 32).toBe(true);
});
