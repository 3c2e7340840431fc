import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { loadTasks, promptBuilder, runServe, syntheticGenerator } from '@rlvr/rollout';
import type { PolicyServer } from '@rlvr/rollout';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { greedyEval } from './held-out.js';
import { writeHeldOut } from './run-held-out.js';
import type { EvalResult } from './run.js';
import { BIN, DATA, WARMUP } from './test-utils/paths.js';

/** Short completions keep the runs quick; the warm-up answers in about 17 tokens. */
const FAST = ['--max-tokens', '48', '-q'];

/** `rlvr-eval ...args` as a child process (stdout and stderr are pipes, colour off unless `env` says otherwise). */
function rlvrEval(
  args: readonly string[],
  env: Record<string, string> = { NO_COLOR: '1' },
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { FORCE_COLOR: _f, NO_COLOR: _n, ...base } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...base, ...env },
      ...(cwd === undefined ? {} : { cwd }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const rlvr = (_eval: 'eval', ...args: string[]) => rlvrEval(args);

let root: string;
let server: PolicyServer;
let dispose: (() => void) | undefined;
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b packages/eval)`);
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
    const args = [
      '--model',
      WARMUP,
      '--dataset',
      DATA,
      '--n',
      '3',
      '--temperature',
      '0.8',
      '--seed',
      '7',
      '--limit',
      '10',
      '--backend',
      'wasm',
      ...FAST,
    ];
    const [ra, rb] = [await rlvr('eval', ...args, '--out', a), await rlvr('eval', ...args, '--out', b)];
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
    expect(A.options).toMatchObject({
      model: WARMUP,
      n: 3,
      temperature: 0.8,
      topP: 0.95,
      topK: 20,
      seed: 7,
      limit: 10,
      maxTokens: 48,
      template: 'tokenizer_config.json',
    }); // the warm-up's shipped chat template (its plain layout)
    expect(Object.keys(A.options)).not.toContain('concurrency');
    expect(Object.keys(A.options)).not.toContain('apiKey');
    expect(A.policy).toMatchObject({ kind: 'model', dir: WARMUP, parameters: 344112, backend: 'wasm', eosTokenIds: [407] });

    const lines = ra.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^dataset\s+problems\s+n\s+mean acc\s+pass@1\s+pass@3\s+mean tokens\s+truncated$/);
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    expect(lines[1]!.split(/\s+/)).toEqual([
      'synthetic',
      '10',
      '3',
      pct(d!.accuracy),
      pct(d!.passAt1),
      pct(d!.passAtN),
      d!.meanTokens.toFixed(1),
      pct(d!.truncated),
    ]);
    expect(lines[2]).toMatch(/^average\s+10\s+3\s/);
    expect(lines[3]).toBe(`results: ${a}`);
  });

  test('greedy (n = 1, temperature 0) agrees with the pretrain greedy evaluator on the same checkpoint and problems', async () => {
    const out = join(root, 'greedy.json');
    const r = await rlvr(
      'eval',
      '--model',
      WARMUP,
      '--dataset',
      DATA,
      '--preset',
      'synthetic',
      '--n',
      '1',
      '--temperature',
      '0',
      '--backend',
      'wasm',
      '--out',
      out,
      '--max-tokens',
      '64',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('rlvr-eval: synthetic: 16 problems x 1: mean acc ');
    const result = await readResult(out);

    // the independent path: prompts rendered and tokenized the way rlvr pretrain did, greedy decoding
    const model = loadModel(WARMUP, { trainable: false });
    const tokenizer = loadTokenizer(WARMUP);
    try {
      const builder = promptBuilder();
      const tasks = (await loadTasks(DATA, 'synthetic')).map((t) => ({
        question: t.question,
        answer: t.answer,
        prompt: tokenizer.encode(builder.text(t.question), { allowSpecial: false }),
      }));
      const greedy = await greedyEval(model, tokenizer, tasks, { maxNewTokens: 64, batchSize: 16, eosId: 407 });
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
    const rows = (await loadTasks(DATA, 'synthetic'))
      .slice(0, 5)
      .map((t, i) => JSON.stringify({ problem: t.question, answer: t.answer, unique_id: `test/${i}.json` }));
    const math = join(root, 'math.jsonl');
    await writeFile(math, rows.join('\n') + '\n');
    const out = join(root, 'two.json');
    const r = await rlvr(
      'eval',
      '--model',
      WARMUP,
      '--dataset',
      DATA,
      '--dataset',
      math,
      '--preset',
      'synthetic',
      '--preset',
      'math500',
      '--n',
      '2',
      '--seed',
      '11',
      '--limit',
      '12',
      '--backend',
      'wasm',
      '--out',
      out,
      ...FAST,
    );
    expect(r.code, r.stderr).toBe(0);
    const result = await readResult(out);
    const [syn, m5] = result.datasets;
    expect(syn).toMatchObject({ name: 'synthetic', preset: 'synthetic', problems: 12 });
    expect(m5).toMatchObject({
      name: 'math500',
      preset: 'math500',
      problems: 5,
      ids: ['test/0.json', 'test/1.json', 'test/2.json', 'test/3.json', 'test/4.json'],
    });
    expect(m5!.correct).toEqual(syn!.correct.slice(0, 5));
    expect(result.average.accuracy).toBeCloseTo((syn!.accuracy + m5!.accuracy) / 2, 12);
    expect(result.weighted.accuracy).toBeCloseTo([...syn!.correct, ...m5!.correct].reduce((s, c) => s + c / 2, 0) / 17, 12);
    expect(result.average.problems).toBe(17);
    const names = r.stdout.split('\n').map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual(['dataset', 'synthetic', 'math500', 'average', 'weighted', 'results:', '']);
  });
});

describe('rlvr eval --held-out RUN_DIR', () => {
  test("evaluates the run's own held-out problems, regenerated from its config; the results file is named after the run", async () => {
    const cwd = await emptyDir();
    // a copy: the results go into the run directory, beside its own records, not into the current directory
    const run = join(await emptyDir(), 'run');
    await cp(join(WARMUP, 'run'), run, { recursive: true });
    const r = await rlvrEval(
      ['--held-out', run, '--model', WARMUP, '--backend', 'wasm', '--limit', '4', '--n', '1', '--temperature', '0', ...FAST],
      { NO_COLOR: '1' },
      cwd,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await readdir(cwd)).toEqual([]);
    const files = (await readdir(run)).filter((f) => f.startsWith('eval-'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^eval-run-\d{8}-\d{6}\.json$/);
    expect(r.stdout).toContain(`results: ${join(run, files[0]!)}\n`);
    const result = await readResult(join(run, files[0]!));
    expect(result.datasets.map((d) => [d.name, d.problems])).toEqual([['held-out', 4]]);
    // the scratch file of the problems is gone
    expect(existsSync(result.datasets[0]!.file)).toBe(false);
    // the problems are the run's: eval.seed and eval.problems of its config.json, through the synthetic generator
    const config = JSON.parse(await readFile(join(run, 'config.json'), 'utf8')) as { eval: { seed: number } };
    const held = join(cwd, 'held.jsonl');
    await writeHeldOut(run, held);
    const rows = (await readFile(held, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { question: string });
    expect(rows.map((x) => x.question)).toEqual(
      syntheticGenerator()
        .tasks(config.eval.seed, 128)
        .map((t) => t.question),
    );
  }, 300_000);

  test("without --out, a run's model writes its results into the run; any other model directory into the current directory", async () => {
    const cwd = await emptyDir();
    const run = join(await emptyDir(), 'my-run');
    await cp(WARMUP, join(run, 'model'), { recursive: true, filter: (f) => !f.endsWith('/run') });
    await writeFile(join(run, 'metrics.jsonl'), '{"step":0}\n');
    const common = ['--dataset', DATA, '--preset', 'synthetic', '--limit', '2', '--n', '1', '--backend', 'wasm', ...FAST];
    const trained = await rlvrEval(['--model', join(run, 'model'), ...common], { NO_COLOR: '1' }, cwd);
    expect(trained.code, trained.stderr).toBe(0);
    expect((await readdir(run)).filter((f) => /^eval-my-run-\d{8}-\d{6}\.json$/.test(f))).toHaveLength(1);
    // a model directory that is not a run's (a download, possibly shared or read-only) is left alone
    const other = await rlvrEval(['--model', WARMUP, ...common], { NO_COLOR: '1' }, cwd);
    expect(other.code, other.stderr).toBe(0);
    expect(await readdir(cwd)).toEqual([expect.stringMatching(/^eval-warmup-\d{8}-\d{6}\.json$/)]);
  }, 300_000);

  test('a directory that is not a run: one line, exit 1, nothing written; --dataset with --held-out is a usage error', async () => {
    const cwd = await emptyDir();
    const r = await rlvrEval(['--held-out', cwd, '--model', WARMUP, '-q'], { NO_COLOR: '1' }, cwd);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe(`rlvr-eval: ${cwd}: not a run directory (no config.json there)\n`);
    expect(await readdir(cwd)).toEqual([]);
    const both = await rlvrEval(['--held-out', cwd, '--dataset', DATA, '-q']);
    expect(both.code).toBe(2);
    expect(both.stderr.split('\n')[0]).toContain('give --held-out RUN_DIR or --dataset FILE, not both');
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
    // rlvr-serve names the model after --model as given, as vLLM does
    expect(R.policy).toEqual({
      kind: 'endpoint',
      url: `http://127.0.0.1:${server.port}/v1`,
      model: WARMUP,
      api: 'completions',
      template: 'model',
    });
    expect(R.options).toMatchObject({
      endpoint: `http://127.0.0.1:${server.port}`,
      chat: false,
      concurrency: 8,
      n: 2,
      temperature: 0,
      maxTokens: 48,
    });
    expect(Object.keys(R.options)).not.toContain('backend');
    const [l, r] = [L.datasets[0]!, R.datasets[0]!];
    expect(r.correct).toEqual(l.correct);
    expect(r.problems).toBe(16);
    for (const k of ['accuracy', 'passAt1', 'passAtN', 'meanTokens', 'truncated', 'noAnswer'] as const) expect(r[k], k).toBe(l[k]);
    // the table rows match too
    expect(rr.stdout.split('\n').slice(0, 3)).toEqual(rl.stdout.split('\n').slice(0, 3));
  });

  test("without --max-tokens both paths take the model's chat template and the same budget: the rest of the context", async () => {
    const local = join(root, 'local-budget.json');
    const remote = join(root, 'remote-budget.json');
    const common = ['--dataset', DATA, '--n', '1', '--temperature', '0', '--limit', '6', '-q'];
    const rl = await rlvr('eval', '--model', WARMUP, '--backend', 'wasm', '--out', local, ...common);
    expect(rl.code, rl.stderr).toBe(0);
    const proxy = await recordingProxy(server.url.replace(/\/v1$/, ''));
    try {
      const rr = await rlvr('eval', '--endpoint', proxy.url, '--out', remote, ...common);
      expect(rr.code, rr.stderr).toBe(0);
      const [L, R] = [await readResult(local), await readResult(remote)];
      // the warm-up's context is 256 tokens and its longest prompt here 33: 223 new tokens on both paths
      const tok = loadTokenizer(WARMUP);
      const longest = Math.max(
        ...(await loadTasks(DATA, 'synthetic')).slice(0, 6).map((t) => tok.encode(promptBuilder().text(t.question)).length),
      );
      tok.free();
      expect(L.options.maxTokens).toBe(256 - longest);
      expect(R.options.maxTokens).toBe(L.options.maxTokens);
      expect(L.policy.template).toBe('tokenizer_config.json');
      expect(R.policy.template).toBe('model');
      // the prompts went as the ids the server's /tokenize gave for the messages (thinking off, as locally)
      const tokenized = proxy.exchanges.filter((x) => x.path === '/tokenize');
      expect(tokenized).toHaveLength(6);
      expect(tokenized[0]!.body).toMatchObject({ add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } });
      const sent = proxy.exchanges.filter((x) => x.path === '/v1/completions');
      expect(sent).toHaveLength(6);
      for (const x of sent) expect(Array.isArray((x.body as { prompt: unknown }).prompt)).toBe(true);
      const [l, r] = [L.datasets[0]!, R.datasets[0]!];
      for (const k of ['correct', 'accuracy', 'meanTokens', 'truncated', 'noAnswer'] as const) expect(r[k], k).toEqual(l[k]);
    } finally {
      await proxy.close();
    }
  }, 300_000);

  test('a server without /tokenize: the plain layout, a budget estimated from bytes, and one warning', async () => {
    const proxy = await recordingProxy(server.url.replace(/\/v1$/, ''), ['/tokenize']);
    try {
      const out = join(root, 'remote-no-tokenize.json');
      const rr = await rlvrEval([
        '--endpoint',
        proxy.url,
        '--out',
        out,
        '--dataset',
        DATA,
        '--temperature',
        '0',
        '--n',
        '1',
        '--limit',
        '2',
        '--max-tokens',
        '24',
      ]);
      expect(rr.code, rr.stderr).toBe(0);
      expect(
        rr.stderr.split('\n').filter((l) => l.includes('warning:')),
        rr.stderr,
      ).toEqual([
        `rlvr-eval: warning: ${proxy.url.replace(/\/v1$/, '')}/tokenize is not available: prompts use the plain layout and the token budget is estimated from their bytes`,
      ]);
      expect((await readResult(out)).policy.template).toBe('plain');
      const bad = await rlvrEval(['--endpoint', proxy.url, '--template', 'model', '--dataset', DATA, '--limit', '1', '-q']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("/tokenize is not available: the model's template needs it; use --template plain|chatml or --chat");
    } finally {
      await proxy.close();
    }
  }, 120_000);

  test('sampled with the same seed, rlvr-serve (which honours the seed field) gives the local samples too, in every request shape', async () => {
    const local = join(root, 'local-sampled.json');
    const common = ['--dataset', DATA, '--n', '3', '--temperature', '0.6', '--seed', '3', '--limit', '8', ...FAST];
    const rl = await rlvr('eval', '--model', WARMUP, '--backend', 'wasm', '--out', local, ...common);
    expect(rl.code, rl.stderr).toBe(0);
    const l = (await readResult(local)).datasets[0]!;
    // through a recording proxy: what each shape sends and how many bytes come back
    const proxy = await recordingProxy(server.url.replace(/\/v1$/, ''));
    const bytes: Record<string, number> = {};
    try {
      for (const shape of [[], ['--stream'], ['--token-ids'], ['--stream', '--token-ids']]) {
        const remote = join(root, `remote-sampled${shape.join('')}.json`);
        const from = proxy.exchanges.length;
        const rr = await rlvr('eval', '--endpoint', proxy.url, '--out', remote, ...shape, ...common);
        expect(rr.code, rr.stderr).toBe(0);
        const R = await readResult(remote);
        const r = R.datasets[0]!;
        expect(r.correct, shape.join(' ')).toEqual(l.correct);
        expect(r.meanTokens, shape.join(' ')).toBe(l.meanTokens);
        expect(r.truncated, shape.join(' ')).toBe(l.truncated);
        expect(R.options).toMatchObject({ stream: shape.includes('--stream'), tokenIds: shape.includes('--token-ids') });
        const sent = proxy.exchanges.slice(from).filter((x) => x.path === '/v1/completions');
        expect(sent).toHaveLength(8);
        for (const x of sent) {
          if (shape.includes('--token-ids')) expect(x.body).toMatchObject({ logprobs: 0, return_tokens_as_token_ids: true });
          else for (const k of ['logprobs', 'return_tokens_as_token_ids', 'echo']) expect(x.body).not.toHaveProperty(k);
          if (shape.includes('--stream')) expect(x.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
          else expect(x.body).not.toHaveProperty('stream');
        }
        bytes[shape.join(' ') || 'text'] = sent.reduce((n, x) => n + x.responseBytes, 0);
      }
    } finally {
      await proxy.close();
    }
    // the default shape is the cheapest on the wire
    expect(Math.min(...Object.values(bytes))).toBe(bytes.text);
    expect(bytes['--token-ids']).toBeGreaterThan(2 * bytes.text!);
  });
});

/** An HTTP proxy on loopback in front of `target` that records each request's path and JSON body and the bytes of its response. */
async function recordingProxy(
  target: string,
  /** paths answered 404 here, as a server without them would */
  missing: readonly string[] = [],
): Promise<{ url: string; exchanges: { path: string; body: unknown; responseBytes: number }[]; close(): Promise<void> }> {
  const exchanges: { path: string; body: unknown; responseBytes: number }[] = [];
  const proxy = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const x = { path: req.url ?? '', body: raw.length > 0 ? JSON.parse(raw.toString('utf8')) : null, responseBytes: 0 };
      exchanges.push(x);
      if (missing.includes(x.path)) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
        return;
      }
      const upstream = await fetch(target + x.path, {
        method: req.method ?? 'GET',
        headers: { 'content-type': 'application/json' },
        ...(raw.length > 0 ? { body: raw } : {}),
      });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      for await (const piece of upstream.body ?? []) {
        x.responseBytes += (piece as Uint8Array).length;
        res.write(piece);
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    exchanges,
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
}

describe('rlvr eval errors: one line, non-zero exit, no output file', () => {
  /** A port nothing listens on: bound by the OS, then closed. */
  const closedPort = async (): Promise<number> => {
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    return port;
  };

  /** Exit `code`, the message on stderr's first line, then (usage errors, exit 2) the usage; no output file. */
  const expectFailure = async (args: string[], code: number, message: string | RegExp) => {
    const dir = await emptyDir();
    const r = await rlvr('eval', ...args, '--out', join(dir, 'eval.json'));
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    if (code === 2) expect(lines.slice(1)).toEqual(['(rlvr-eval --help lists the options)']);
    else expect(lines).toHaveLength(1);
    if (typeof message === 'string') expect(lines[0]).toBe(message);
    else expect(lines[0]).toMatch(message);
    expect(await readdir(dir)).toEqual([]);
  };

  test('a missing dataset file', async () => {
    const missing = join(root, 'AIME24', 'test.jsonl');
    await expectFailure(['--model', WARMUP, '--dataset', missing, '-q'], 1, `rlvr-eval: ${missing}: dataset not found`);
  });

  test('an unknown preset, and a file read with the wrong preset', async () => {
    await expectFailure(
      ['--model', WARMUP, '--dataset', DATA, '--preset', 'aime2024'],
      2,
      'rlvr-eval: --preset: unknown preset "aime2024": the presets are deepmath, math500, aime (or aime24), amc (or amc23), college_math (or college), minerva_math (or minerva), olympiadbench (or olympiad), gsm8k, synthetic, or a field mapping {"question": ..., "answer": ...}',
    );
    await expectFailure(
      ['--model', WARMUP, '--dataset', DATA, '--preset', 'math500', '-q'],
      1,
      `rlvr-eval: ${DATA}:1, field problem: expected a non-empty string question, got nothing (field missing) (read as preset math500)`,
    );
  });

  test('no --model or --endpoint, and both', async () => {
    await expectFailure(['--dataset', DATA], 2, 'rlvr-eval: give the policy to evaluate: --model DIR or --endpoint URL');
    await expectFailure(
      ['--model', WARMUP, '--endpoint', 'http://127.0.0.1:8000/v1', '--dataset', DATA],
      2,
      'rlvr-eval: give one of --model and --endpoint, not both',
    );
  });

  test('an endpoint nothing listens on', async () => {
    const port = await closedPort();
    await expectFailure(
      ['--endpoint', `http://127.0.0.1:${port}/v1`, '--dataset', DATA, '-q'],
      1,
      `rlvr-eval: cannot reach http://127.0.0.1:${port}/v1/models: ECONNREFUSED`,
    );
  });

  test('a server that refuses the requests (a model it does not serve): the first failure stops the run, naming the problem', async () => {
    const esc = DATA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await expectFailure(
      ['--endpoint', server.url, '--model-name', 'nope', '--dataset', DATA, '--max-tokens', '48', '-q'],
      1,
      new RegExp(
        `^rlvr-eval: ${esc}:\\d+: sampling from ${server.url.replace(/\./g, '\\.')}(/v1)? failed: HTTP 404: .*The model \`nope\` does not exist.* \\(after 1 attempt\\)$`,
      ),
    );
  });

  test('a model directory that is not one, and a bad number', async () => {
    await expectFailure(
      ['--model', join(root, 'no-model'), '--dataset', DATA, '-q'],
      1,
      `rlvr-eval: ${join(root, 'no-model')}: model directory not found (no config.json there)`,
    );
    await expectFailure(
      ['--model', WARMUP, '--dataset', DATA, '--top-p', '1.5', '--n', '0'],
      2,
      'rlvr-eval: --n: Too small: expected number to be >=1 (got 0); --top-p: Too big: expected number to be <=1 (got 1.5)',
    );
    await expectFailure(
      ['--model', WARMUP, '--dataset', DATA, '--max-tokens', '1000', '--backend', 'wasm', '-q'],
      2,
      new RegExp(
        `^rlvr-eval: ${DATA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: max tokens 1000 does not fit: the longest prompt has \\d+ tokens and the model's context is 256 \\(at most \\d+\\)$`,
      ),
    );
  });
});

test('rlvr-eval --help', async () => {
  const r = await rlvr('eval', '--help');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^usage: rlvr eval \(--model DIR \| --endpoint URL\) --dataset FILE/);
});

describe('rlvr-eval datasets in any layout, and questions too long to evaluate', () => {
  test('a field mapping, as rlvr train reads it, gives the same samples as the preset on the same questions', async () => {
    // the first 6 problems in a layout of their own: a nested question, the answer boxed in a solution
    const rows = (await loadTasks(DATA, 'synthetic'))
      .slice(0, 6)
      .map((t, i) => JSON.stringify({ uid: `p${i}`, body: { text: t.question }, worked: `The answer is \\boxed{${t.answer}}.` }));
    const mine = join(root, 'mine.jsonl');
    await writeFile(mine, rows.join('\n') + '\n');
    const [a, b] = [join(root, 'mapped.json'), join(root, 'preset.json')];
    const common = ['--model', WARMUP, '--n', '2', '--seed', '4', '--backend', 'wasm', ...FAST];
    const fields = '{"question": "body.text", "answer": "worked", "answerFormat": "last_boxed", "id": "uid"}';
    const [ra, rb] = [
      await rlvr('eval', '--dataset', mine, '--preset', fields, '--out', a, ...common),
      await rlvr('eval', '--dataset', DATA, '--limit', '6', '--out', b, ...common),
    ];
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const [A, B] = [(await readResult(a)).datasets[0]!, (await readResult(b)).datasets[0]!];
    expect(A).toMatchObject({
      name: 'mine',
      fields: { question: 'body.text', answer: 'worked', answerFormat: 'last_boxed', id: 'uid' },
      problems: 6,
      ids: ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'],
    });
    expect(A).not.toHaveProperty('preset');
    expect(A.correct).toEqual(B.correct);
    expect(ra.stdout.split('\n')[1]!.split(/\s+/)[0]).toBe('mine');
  });

  test('a field mapping that does not fit the rows names file, line and field, as rlvr train does', async () => {
    const dir = await emptyDir();
    const r = await rlvr(
      'eval',
      '--model',
      WARMUP,
      '--dataset',
      DATA,
      '--preset',
      '{"question": "question", "answer": "solution"}',
      '--out',
      join(dir, 'x.json'),
      '-q',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `rlvr-eval: ${DATA}:1, field solution: expected a non-empty string or a finite number, got nothing (field missing) (read as fields {"question":"question","answer":"solution","answerFormat":"value"})\n`,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  test('a 1 MB question: one line naming its file and line, before the model is even loaded', async () => {
    const big = join(root, 'big.jsonl');
    const ok = JSON.stringify({ question: 'What is 2 + 2?', answer: '4' });
    await writeFile(
      big,
      [ok, ok, JSON.stringify({ question: `Add these: ${'1 + '.repeat(250_000)}1`, answer: '250001' })].join('\n') + '\n',
    );
    const dir = await emptyDir();
    // no -q: had the model been loaded, its backend line would be on stderr
    const r = await rlvr(
      'eval',
      '--model',
      WARMUP,
      '--dataset',
      big,
      '--preset',
      'synthetic',
      '--backend',
      'wasm',
      '--out',
      join(dir, 'x.json'),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `rlvr-eval: ${big}:3, field question: the question is 1,000,012 characters, over the limit of 100,000 (--max-question-chars)\n`,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('rlvr-eval progress on a pipe', () => {
  test('plain lines, no control codes even with TERM set; the rate in s/problem as the closing line computes it', async () => {
    const out = join(root, 'progress.json');
    const r = await rlvrEval(
      [
        '--model',
        WARMUP,
        '--dataset',
        DATA,
        '--n',
        '1',
        '--temperature',
        '0',
        '--batch-size',
        '1',
        '--max-tokens',
        '24',
        '--backend',
        'wasm',
        '--out',
        out,
      ],
      { TERM: 'xterm-256color' },
    );
    expect(r.code, r.stderr).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts an ANSI colour code
    expect(r.stderr + r.stdout).not.toMatch(/\x1b|\r/);
    const lines = r.stderr.trimEnd().split('\n');
    const progress = lines.filter((l) => /^rlvr-eval: synthetic \(1\/1\): \d+\/16 problems/.test(l));
    // chunks of 4 problems (4 decoding batches of 1 row): a line at 4, 8 and 12 of 16, none at the end
    expect(progress.map((l) => /(\d+)\/16/.exec(l)![1])).toEqual(['4', '8', '12']);
    for (const l of progress) expect(l).toMatch(/problems, \d+\.\d\d s\/problem$/);
    const result = await readResult(out);
    const d = result.datasets[0]!;
    const last = lines.find((l) => l.startsWith('rlvr-eval: synthetic: 16 problems x 1: '))!;
    expect(last).toBe(
      `rlvr-eval: synthetic: 16 problems x 1: mean acc ${(100 * d.accuracy).toFixed(1)}%, pass@1 ${(100 * d.passAtN).toFixed(1)}% (${d.seconds.toFixed(1)} s, ${(d.seconds / 16).toFixed(2)} s/problem)`,
    );
  });
});
