import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { isRlvrError } from '@rlvr/core';
import type { RlvrError } from '@rlvr/core';
import { checkCheckpointTask, readRunDir } from './run-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rlvr-rundir-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sample = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({
    step: 3,
    group: 1,
    reward: 1,
    correct: true,
    advantage: 0.5,
    prompt: 'p',
    tokens: ['a', 'b', '{', '4', '}'],
    weights: [1, 1.2, 1, 2, 1],
    spans: { open: [2, 3], content: [3, 4], close: [4, 5] },
    ...over,
  });

/** The rlvr error `p` rejects with: a `ReportError`, or core's `read_failed` for a file that cannot be read as JSON lines. */
async function errorOf(p: Promise<unknown>): Promise<RlvrError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isRlvrError(err), String(err)).toBe(true);
  return err as RlvrError;
}

describe('readRunDir', () => {
  test('reads config, metrics and samples; skips blank lines; null metrics are kept as null', async () => {
    await writeFile(join(dir, 'config.json'), JSON.stringify({ seed: 3, estimator: { name: 'grail' } }));
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"reward/mean":0.25}\n\n{"step":1,"reward/mean":null,"my/metric":3}\n');
    await writeFile(join(dir, 'samples.jsonl'), sample() + '\n' + sample({ spans: null, extra: 'ignored' }) + '\n');
    const run = await readRunDir(dir);
    expect(run.config).toEqual({ seed: 3, estimator: { name: 'grail' } });
    expect(run.metrics).toEqual([
      { step: 0, 'reward/mean': 0.25 },
      { step: 1, 'reward/mean': null, 'my/metric': 3 },
    ]);
    expect(run.samples).toHaveLength(2);
    expect(run.samples![0]!.spans).toEqual({ open: [2, 3], content: [3, 4], close: [4, 5] });
    expect(run.samples![1]!.spans).toBeNull();
    expect(run.samples![1]).not.toHaveProperty('extra');
  });

  test('config.json and samples.jsonl are optional; absent is null, not empty', async () => {
    await writeFile(join(dir, 'metrics.jsonl'), '');
    const run = await readRunDir(dir);
    expect(run).toEqual({ dir, config: null, metrics: [], samples: null, evals: null, checkpointWeights: null });
  });

  test('a missing metrics.jsonl names the file', async () => {
    await writeFile(join(dir, 'samples.jsonl'), sample() + '\n');
    const err = await errorOf(readRunDir(dir));
    expect(err.code).toBe('missing_file');
    expect(err.message).toBe(`${join(dir, 'metrics.jsonl')}: run directory ${dir} has no metrics.jsonl`);
  });

  test('a missing run directory, and a file given as one', async () => {
    const missing = join(dir, 'nope');
    expect((await errorOf(readRunDir(missing))).message).toContain(`run directory ${missing} does not exist`);
    await writeFile(join(dir, 'f'), 'x');
    expect((await errorOf(readRunDir(join(dir, 'f')))).message).toContain('is not a directory');
  });

  test('invalid JSON names file and line', async () => {
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0}\n\n{"step":2,\n');
    const err = await errorOf(readRunDir(dir));
    expect(err.name).toBe('CoreError');
    expect(err.code).toBe('read_failed');
    expect(err.location).toEqual({ file: join(dir, 'metrics.jsonl'), line: 3 });
    expect(err.message).toMatch(new RegExp(`^${join(dir, 'metrics.jsonl')}:3: not JSON: `));
  });

  test('a non-numeric metric names file, line and field', async () => {
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"loss/policy":0.1}\n{"step":1,"loss/policy":"0.2"}\n');
    const err = await errorOf(readRunDir(dir));
    expect(err.location).toEqual({ file: join(dir, 'metrics.jsonl'), line: 2, field: 'loss/policy' });
    expect(err.message).toContain('metrics.jsonl:2, field loss/policy: ');
  });

  test('step must be a non-negative integer', async () => {
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":1.5}\n');
    expect((await errorOf(readRunDir(dir))).location.field).toBe('step');
    await writeFile(join(dir, 'metrics.jsonl'), '{"reward/mean":1}\n');
    expect((await errorOf(readRunDir(dir))).location.field).toBe('step');
  });

  test.each([
    ['weights of another length', { weights: [1, 1] }, 'weights', 'has 2 entries but tokens has 5'],
    [
      'a span past the end',
      { spans: { open: [2, 3], content: [3, 4], close: [4, 9] } },
      'spans.close',
      'ends at token 9 but the completion has 5 tokens',
    ],
    ['unordered spans', { spans: { open: [3, 4], content: [2, 3], close: [4, 5] } }, 'spans', 'spans must be ordered'],
    ['a non-boolean correct', { correct: 1 }, 'correct', 'expected boolean'],
    ['a token that is not text', { tokens: ['a', 'b', 7, '4', '}'] }, 'tokens.2', 'expected string'],
    ['a missing prompt', { prompt: undefined }, 'prompt', 'expected string'],
  ])('samples.jsonl with %s names line and field', async (_what, over, field, text) => {
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0}\n');
    await writeFile(join(dir, 'samples.jsonl'), sample() + '\n' + sample(over) + '\n');
    const err = await errorOf(readRunDir(dir));
    expect(err.code).toBe('invalid_record');
    expect(err.location).toEqual({ file: join(dir, 'samples.jsonl'), line: 2, field });
    expect(err.message).toContain(text);
  });

  test('config.json must be a JSON object', async () => {
    await writeFile(join(dir, 'metrics.jsonl'), '');
    await writeFile(join(dir, 'config.json'), '[1, 2]');
    const err = await errorOf(readRunDir(dir));
    expect(err.message).toBe(`${join(dir, 'config.json')}: must be a JSON object`);
    await writeFile(join(dir, 'config.json'), '{"a":');
    expect((await errorOf(readRunDir(dir))).message).toContain('config.json: not JSON: ');
  });

  test('a metrics.jsonl that is a directory cannot be read', async () => {
    await mkdir(join(dir, 'metrics.jsonl'));
    const err = await errorOf(readRunDir(dir));
    expect(err.code).toBe('read_failed');
    expect(err.message).toMatch(/metrics\.jsonl(:\d+)?: cannot read/);
  });

  const evalLine = (over: Record<string, unknown> = {}): string =>
    JSON.stringify({
      step: 0,
      accuracy: 0.5,
      passAtN: 0.75,
      n: 2,
      problems: 4,
      correct: [2, 1, 1, 0],
      greedyAccuracy: 0.5,
      greedyCorrect: [1, 0, 1, 0],
      ...over,
    });

  test('evals.jsonl: held-out evaluations with per-problem counts; other keys ignored', async () => {
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0}\n');
    await writeFile(
      join(dir, 'evals.jsonl'),
      evalLine() + '\n' + evalLine({ step: 5, greedyAccuracy: undefined, greedyCorrect: undefined, note: 'x' }) + '\n',
    );
    const run = await readRunDir(dir);
    expect(run.evals).toEqual([
      { step: 0, accuracy: 0.5, passAtN: 0.75, n: 2, problems: 4, correct: [2, 1, 1, 0], greedyAccuracy: 0.5, greedyCorrect: [1, 0, 1, 0] },
      { step: 5, accuracy: 0.5, passAtN: 0.75, n: 2, problems: 4, correct: [2, 1, 1, 0] },
    ]);
  });

  test.each([
    ['counts for other problems', { correct: [2, 1] }, 'correct', 'has 2 counts for 4 problems'],
    ['more correct than samples', { correct: [2, 3, 1, 0] }, 'correct.1', '3 correct of n = 2 samples'],
    ['a greedy score that is not 0 or 1', { greedyCorrect: [1, 0, 2, 0] }, 'greedyCorrect.2', 'Too big'],
    ['an accuracy above 1', { accuracy: 1.5 }, 'accuracy', 'Too big'],
  ])('evals.jsonl with %s names line and field', async (_what, over, field, text) => {
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0}\n');
    await writeFile(join(dir, 'evals.jsonl'), evalLine() + '\n' + evalLine(over) + '\n');
    const err = await errorOf(readRunDir(dir));
    expect(err.code).toBe('invalid_record');
    expect(err.location).toEqual({ file: join(dir, 'evals.jsonl'), line: 2, field });
    expect(err.message).toContain(text);
  });
});

describe('checkCheckpointTask', () => {
  const longChain = { minSteps: 4, maxSteps: 8, minDigits: 2, maxDigits: 3, maxValue: 999 };
  async function pretrainRun(config: Record<string, unknown>): Promise<string> {
    await writeFile(join(dir, 'config.json'), JSON.stringify({ command: 'pretrain', ...config }));
    return join(dir, 'checkpoint');
  }

  test("a checkpoint of the run's own task passes; no run config there, nothing is checked", async () => {
    const ckpt = await pretrainRun({ family: 'long-chain', longChain });
    expect(() => checkCheckpointTask(ckpt, { family: 'long-chain', longChain: { ...longChain } })).not.toThrow();
    expect(() => checkCheckpointTask(join(dir, 'elsewhere', 'model'), { family: 'arith' })).not.toThrow();
  });

  test('another family is refused, naming both', async () => {
    const ckpt = await pretrainRun({ family: 'long-chain', longChain });
    expect(() => checkCheckpointTask(ckpt, { family: 'arith' })).toThrow(
      `checkpoint ${ckpt} was made on task long-chain (${join(dir, 'config.json')}), not on this run's task arith: pass --family long-chain`,
    );
  });

  test('the long-chain family with other options is refused, naming the options that differ on both sides', async () => {
    const ckpt = await pretrainRun({ family: 'long-chain', longChain: { ...longChain, maxDigits: 2, maxValue: 99 } });
    expect(() => checkCheckpointTask(ckpt, { family: 'long-chain', longChain })).toThrow(
      `was made on task long-chain with maxDigits 2, maxValue 99 (${join(dir, 'config.json')}), not on this run's task long-chain with maxDigits 3, maxValue 999: pass a --config with the checkpoint's longChain options`,
    );
  });
});
