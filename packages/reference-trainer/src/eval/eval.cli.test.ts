import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { loadTasks, promptBuilder, runServe } from '@rlvr/rollout';
import type { PolicyServer } from '@rlvr/rollout';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { greedyAccuracy } from '../pretrain/evaluate.js';
import type { SftTask } from '../pretrain/data.js';
import { CLI, rlvr } from '../test-utils/run-cli.js';
import type { EvalResult } from './run.js';

/** The shipped warm-up checkpoint (344k parameters, synthetic arithmetic) and 16 problems of its task. */
const WARMUP = fileURLToPath(new URL('../../assets/warmup', import.meta.url));
const DATA = fileURLToPath(new URL('../../fixtures/eval/synthetic-16.jsonl', import.meta.url));
/** Short completions keep the runs quick; the warm-up answers in about 17 tokens. */
const FAST = ['--max-tokens', '48', '-q'];

let root: string;
let server: PolicyServer;
let dispose: (() => void) | undefined;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-eval-'));
  await selectBackend({ backend: 'wasm' });
  const logs: string[] = [];
  const io = { stdout: { write: (s: string) => logs.push(s) }, stderr: { write: (s: string) => logs.push(s) } };
  const served = await runServe(['--model', WARMUP, '--port', '0', '--backend', 'wasm', '--quiet'], io);
  if (served.server === undefined) throw new Error(`rlvr-serve did not start: ${logs.join('')}`);
  server = served.server;
  dispose = served.dispose;
});
afterAll(async () => {
  await server?.close();
  dispose?.();
  await rm(root, { recursive: true, force: true });
});

const readResult = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as EvalResult;

/** A fresh empty directory: error cases must leave it empty. */
const emptyDir = () => mkdtemp(join(root, 'case-'));

describe('rlvr eval --model', () => {
  test('seeded sampling: the same seed gives the same samples; the JSON numbers follow from the per-problem counts; a table on stdout', async () => {
    const a = join(root, 'a.json');
    const b = join(root, 'b.json');
    const args = ['eval', '--model', WARMUP, '--dataset', DATA, '--n', '3', '--temperature', '0.8', '--seed', '7', '--limit', '10', '--backend', 'wasm', ...FAST];
    const [ra, rb] = [await rlvr(...args, '--out', a), await rlvr(...args, '--out', b)];
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(ra.stderr).toBe(''); // -q
    const [A, B] = [await readResult(a), await readResult(b)];
    const [d] = A.datasets;
    expect(A.datasets).toHaveLength(1);
    expect(d!.correct).toEqual(B.datasets[0]!.correct);
    expect(d!.meanTokens).toBe(B.datasets[0]!.meanTokens);

    expect(d).toMatchObject({ name: 'synthetic', preset: 'synthetic', problems: 10, n: 3, lines: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    expect(d!.ids).toEqual(undefined);
    const c = d!.correct;
    expect(c).toHaveLength(10);
    expect(c.every((x) => Number.isInteger(x) && x >= 0 && x <= 3)).toBe(true);
    expect(d!.accuracy).toBeCloseTo(c.reduce((s, x) => s + x / 3, 0) / 10, 12);
    expect(d!.passAt1).toBeCloseTo(d!.accuracy, 12);
    expect(d!.passAtN).toBeCloseTo(c.filter((x) => x > 0).length / 10, 12);
    expect(A.average).toMatchObject({ problems: 10, n: 3, accuracy: d!.accuracy, passAtN: d!.passAtN });
    expect(A.options).toMatchObject({ model: WARMUP, n: 3, temperature: 0.8, topP: 0.95, topK: 20, seed: 7, limit: 10, maxTokens: 48, template: 'plain' });
    expect(Object.keys(A.options)).not.toContain('concurrency');
    expect(Object.keys(A.options)).not.toContain('apiKey');
    expect(A.policy).toMatchObject({ kind: 'model', dir: WARMUP, parameters: 344112, backend: 'wasm', eosTokenIds: [407] });

    const lines = ra.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^dataset\s+problems\s+n\s+mean acc\s+pass@1\s+pass@3\s+mean tokens\s+truncated$/);
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    expect(lines[1]!.split(/\s+/)).toEqual(['synthetic', '10', '3', pct(d!.accuracy), pct(d!.passAt1), pct(d!.passAtN), d!.meanTokens.toFixed(1), pct(d!.truncated)]);
    expect(lines[2]).toMatch(/^average\s+10\s+3\s/);
    expect(lines[3]).toBe(`results: ${a}`);
  });

  test('greedy (n = 1, temperature 0) agrees with the pretrain greedy evaluator on the same checkpoint and problems', async () => {
    const out = join(root, 'greedy.json');
    const r = await rlvr('eval', '--model', WARMUP, '--dataset', DATA, '--preset', 'synthetic', '--n', '1', '--temperature', '0', '--backend', 'wasm', '--out', out, '--max-tokens', '64');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('rlvr eval: synthetic: 16 problems x 1: mean acc ');
    const result = await readResult(out);

    // the independent path: prompts rendered and tokenized the way rlvr pretrain did, greedy decoding
    const model = loadModel(WARMUP, { trainable: false });
    const tokenizer = loadTokenizer(WARMUP);
    try {
      const builder = promptBuilder();
      const tasks: SftTask[] = (await loadTasks(DATA, 'synthetic')).map((t) => ({ question: t.question, answer: t.answer, prompt: tokenizer.encode(builder.text(t.question), { allowSpecial: false }), completion: [] }));
      const greedy = await greedyAccuracy(model, tokenizer, tasks, { maxNewTokens: 64, batchSize: 16, eosId: 407 });
      expect(result.datasets[0]!.correct.reduce((s, x) => s + x, 0)).toBe(greedy.correct);
      expect(result.datasets[0]!.meanTokens).toBeCloseTo(greedy.meanTokens, 12);
      // the warm-up solves roughly half of its task greedily
      expect(greedy.accuracy).toBeGreaterThanOrEqual(0.25);
      expect(greedy.accuracy).toBeLessThanOrEqual(0.9);
    } finally {
      model.dispose();
      tokenizer.free();
    }
  });
});

describe('rlvr eval on several datasets', () => {
  test('per-file presets, a row per dataset, average and weighted rows; a question gets the same samples in any file', async () => {
    // the first 5 problems again, in the MATH-500 layout (problem / answer / unique_id)
    const rows = (await loadTasks(DATA, 'synthetic')).slice(0, 5).map((t, i) => JSON.stringify({ problem: t.question, answer: t.answer, unique_id: `test/${i}.json` }));
    const math = join(root, 'math.jsonl');
    await writeFile(math, rows.join('\n') + '\n');
    const out = join(root, 'two.json');
    const r = await rlvr('eval', '--model', WARMUP, '--dataset', DATA, '--dataset', math, '--preset', 'synthetic', '--preset', 'math500', '--n', '2', '--seed', '11', '--limit', '12', '--backend', 'wasm', '--out', out, ...FAST);
    expect(r.code, r.stderr).toBe(0);
    const result = await readResult(out);
    const [syn, m5] = result.datasets;
    expect(syn).toMatchObject({ name: 'synthetic', preset: 'synthetic', problems: 12 });
    expect(m5).toMatchObject({ name: 'math500', preset: 'math500', problems: 5, ids: ['test/0.json', 'test/1.json', 'test/2.json', 'test/3.json', 'test/4.json'] });
    expect(m5!.correct).toEqual(syn!.correct.slice(0, 5));
    expect(result.average.accuracy).toBeCloseTo((syn!.accuracy + m5!.accuracy) / 2, 12);
    expect(result.weighted.accuracy).toBeCloseTo([...syn!.correct, ...m5!.correct].reduce((s, c) => s + c / 2, 0) / 17, 12);
    expect(result.average.problems).toBe(17);
    const names = r.stdout.split('\n').map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual(['dataset', 'synthetic', 'math500', 'average', 'weighted', 'results:', '']);
  });
});

describe('rlvr eval --endpoint', () => {
  test('at temperature 0, rlvr-serve on loopback gives the local model result problem by problem (model name from GET /models)', async () => {
    const local = join(root, 'local.json');
    const remote = join(root, 'remote.json');
    const common = ['--dataset', DATA, '--n', '2', '--temperature', '0', ...FAST];
    const rl = await rlvr('eval', '--model', WARMUP, '--backend', 'wasm', '--out', local, ...common);
    expect(rl.code, rl.stderr).toBe(0);
    // a base URL without a path means .../v1
    const rr = await rlvr('eval', '--endpoint', `http://127.0.0.1:${server.port}`, '--out', remote, ...common);
    expect(rr.code, rr.stderr).toBe(0);
    const [L, R] = [await readResult(local), await readResult(remote)];
    expect(R.policy).toEqual({ kind: 'endpoint', url: `http://127.0.0.1:${server.port}/v1`, model: 'warmup', api: 'completions', template: 'plain' });
    expect(R.options).toMatchObject({ endpoint: `http://127.0.0.1:${server.port}`, chat: false, concurrency: 8, n: 2, temperature: 0, maxTokens: 48 });
    expect(Object.keys(R.options)).not.toContain('backend');
    const [l, r] = [L.datasets[0]!, R.datasets[0]!];
    expect(r.correct).toEqual(l.correct);
    expect(r.problems).toBe(16);
    for (const k of ['accuracy', 'passAt1', 'passAtN', 'meanTokens', 'truncated', 'noAnswer'] as const) expect(r[k], k).toBe(l[k]);
    // the table rows match too
    expect(rr.stdout.split('\n').slice(0, 3)).toEqual(rl.stdout.split('\n').slice(0, 3));
  });

  test('sampled with the same seed, rlvr-serve (which honours the seed field) gives the local samples too', async () => {
    const local = join(root, 'local-sampled.json');
    const remote = join(root, 'remote-sampled.json');
    const common = ['--dataset', DATA, '--n', '3', '--temperature', '0.6', '--seed', '3', '--limit', '8', ...FAST];
    const rl = await rlvr('eval', '--model', WARMUP, '--backend', 'wasm', '--out', local, ...common);
    const rr = await rlvr('eval', '--endpoint', server.url, '--out', remote, ...common);
    expect(rl.code, rl.stderr).toBe(0);
    expect(rr.code, rr.stderr).toBe(0);
    const [l, r] = [(await readResult(local)).datasets[0]!, (await readResult(remote)).datasets[0]!];
    expect(r.correct).toEqual(l.correct);
    expect(r.meanTokens).toBe(l.meanTokens);
  });
});

describe('rlvr eval errors: one line, non-zero exit, no output file', () => {
  /** A port nothing listens on: bound by the OS, then closed. */
  const closedPort = async (): Promise<number> => {
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    return port;
  };

  const expectFailure = async (args: string[], code: number, message: string | RegExp) => {
    const dir = await emptyDir();
    const r = await rlvr('eval', ...args, '--out', join(dir, 'eval.json'));
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    if (typeof message === 'string') expect(lines[0]).toBe(message);
    else expect(lines[0]).toMatch(message);
    expect(await readdir(dir)).toEqual([]);
  };

  test('a missing dataset file', async () => {
    const missing = join(root, 'AIME24', 'test.jsonl');
    await expectFailure(['--model', WARMUP, '--dataset', missing, '-q'], 1, `rlvr eval: ${missing}: dataset not found`);
  });

  test('an unknown preset, and a file read with the wrong preset', async () => {
    await expectFailure(['--model', WARMUP, '--dataset', DATA, '--preset', 'aime2024'], 2, 'rlvr eval: unknown --preset "aime2024" (available: math500, aime24, amc23, minerva, college, olympiad, synthetic)');
    await expectFailure(['--model', WARMUP, '--dataset', DATA, '--preset', 'math500', '-q'], 1, `rlvr eval: ${DATA}:1, field problem: expected a non-empty string question, got nothing (field missing) (read as preset math500)`);
  });

  test('no --model or --endpoint, and both', async () => {
    await expectFailure(['--dataset', DATA], 2, 'rlvr eval: give the policy to evaluate: --model DIR or --endpoint URL');
    await expectFailure(['--model', WARMUP, '--endpoint', 'http://127.0.0.1:8000/v1', '--dataset', DATA], 2, 'rlvr eval: give one of --model and --endpoint, not both');
  });

  test('an endpoint nothing listens on', async () => {
    const port = await closedPort();
    await expectFailure(['--endpoint', `http://127.0.0.1:${port}/v1`, '--dataset', DATA, '-q'], 1, `rlvr eval: cannot reach http://127.0.0.1:${port}/v1/models: ECONNREFUSED`);
  });

  test('a server that refuses the requests (rlvr-serve has no chat template for the warm-up): the first failure stops the run', async () => {
    const esc = DATA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await expectFailure(['--endpoint', server.url, '--chat', '--dataset', DATA, '--max-tokens', '48', '-q'], 1, new RegExp(`^rlvr eval: sampling from ${server.url.replace(/\./g, '\\.')} failed on ${esc}:\\d+: HTTP 400: .*this model has no chat template.* \\(after 1 attempt\\)$`));
  });

  test('a model directory that is not one, and a bad number', async () => {
    await expectFailure(['--model', join(root, 'no-model'), '--dataset', DATA, '-q'], 1, `rlvr eval: ${join(root, 'no-model')}: model directory not found (no config.json there)`);
    await expectFailure(['--model', WARMUP, '--dataset', DATA, '--top-p', '1.5', '--n', '0'], 2, 'rlvr eval: --n: Too small: expected number to be >=1 (got 0); --top-p: Too big: expected number to be <=1 (got 1.5)');
    await expectFailure(['--model', WARMUP, '--dataset', DATA, '--max-tokens', '1000', '--backend', 'wasm', '-q'], 2, /^rlvr eval: max tokens 1000 does not fit: the longest prompt has \d+ tokens and the model's context is 256 \(at most \d+\)$/);
  });
});

test('rlvr eval --help', async () => {
  const r = await rlvr('eval', '--help');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^usage: rlvr eval \(--model DIR \| --endpoint URL\) --dataset FILE/);
});
