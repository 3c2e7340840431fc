/** `rlvr-eval` on the long-chain task, through the built bin: the Step-Quality metrics in the JSON and the table. */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longChainGenerator } from '@rlvr/tasks';
import type { StepQuality } from './step-quality.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EvalResult } from './run.js';
import { BIN, DATA, WARMUP } from './test-utils/paths.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-eval-steps-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

function rlvrEval(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { FORCE_COLOR: _f, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const cell = (m: { mean: number | null; se: number | null }, f: (x: number) => string) =>
  m.mean === null ? '-' : m.se === null ? f(m.mean) : `${f(m.mean)} ± ${f(m.se)}`;
/** The table row `formatEvalTable` must print for a dataset's metrics, cell by cell. */
const row = (name: string, q: StepQuality) => {
  const t = q.tokensPerSolved;
  return [
    name,
    String(q.problems),
    cell(q.usefulDensity, pct),
    String(q.wrong),
    cell(q.localised, pct),
    cell(q.errorAt, (x) => x.toFixed(2)),
    t.value === null ? '-' : t.se === null ? t.value.toFixed(1) : `${t.value.toFixed(1)} ± ${t.se.toFixed(1)}`,
  ];
};

test('files with chains (long-chain, and the arithmetic task the warm-up model was trained on) get the Step-Quality metrics; a file without does not', async () => {
  const long = join(root, 'long-chain-8.jsonl');
  const arith = join(root, 'synth-arith-16.jsonl');
  const write = (f: string, rows: { question: string; answer: number | string; chain: unknown }[]) =>
    writeFile(f, rows.map((t) => JSON.stringify({ question: t.question, answer: String(t.answer), chain: t.chain })).join('\n') + '\n');
  await write(long, longChainGenerator({ maxSteps: 5 }).tasks(11, 8));
  // the warm-up model's own problems (DATA), their chains read from the question: "X has 6. She buys 9 more, then gives away 2."
  const own = (await readFile(DATA, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => {
      const row = JSON.parse(l) as { question: string; answer: string };
      const start = Number(/has (\d+)/.exec(row.question)![1]);
      let value = start;
      const steps = [...row.question.matchAll(/(gives away|buys) (\d+)/g)].map((m) => {
        const operand = Number(m[2]);
        const op = m[1] === 'buys' ? 'add' : 'sub';
        value = op === 'add' ? value + operand : value - operand;
        return { op, operand, result: value };
      });
      return { ...row, chain: { start, steps } };
    });
  await write(arith, own);
  const out = join(root, 'out.json');
  // temperature 0.8: the tiny arithmetic model gets some right and some wrong
  const r = await rlvrEval([
    ...['--model', WARMUP, '--backend', 'wasm', '--dataset', long, '--dataset', arith, '--dataset', DATA, '--limit', '8', '--n', '2'],
    ...['--temperature', '0.8', '--seed', '5', '--max-tokens', '64', '--out', out],
  ]);
  expect(r.code, r.stderr).toBe(0);
  const result = JSON.parse(await readFile(out, 'utf8')) as EvalResult;
  expect(result.datasets[2]!.stepQuality).toBeUndefined();
  const lines = r.stdout.split('\n');
  const head = lines.findIndex((l) => l.startsWith('step quality'));
  expect(lines[head]).toMatch(/^step quality\s+problems\s+useful steps\s+wrong\s+first error found\s+first error at\s+tokens\/solved$/);
  for (const [k, d] of result.datasets.slice(0, 2).entries()) {
    const q = d.stepQuality!;
    expect(q).toMatchObject({ problems: 8, samples: 16 });
    // the counts agree with the dataset's own scores
    const solved = d.correct.reduce((a, c) => a + c, 0);
    expect(q.tokensPerSolved.solved).toBe(solved);
    expect(q.tokensPerSolved.tokens).toBeCloseTo(d.meanTokens * 16, 6);
    expect(q.wrong).toBe(16 - solved);
    expect(Object.values(q.firstErrors).reduce((a, c) => a + c, 0)).toBe(q.wrong);
    expect(q.tokensPerSolved.value).toBe(solved === 0 ? null : q.tokensPerSolved.tokens / solved);
    expect(r.stderr).toContain(`${d.name}: step quality over 8 problems with chains (mean ± SE over problems): useful-step density `);
    expect(lines[head + 1 + k]!.split(/ {2,}/)).toEqual(row(d.name, q));
  }
  // on its own task the warm-up model writes equations, some of them useful, solves some problems and not others
  const q = result.datasets[1]!.stepQuality!;
  expect(q.usefulDensity.mean).toBeGreaterThan(0);
  expect(q.tokensPerSolved.solved).toBeGreaterThan(0);
  expect(q.wrong).toBeGreaterThan(0);
  expect(q.localised.mean).toBeGreaterThan(0);
  expect(lines[head + 3]).toMatch(/^results: /);
}, 600_000);
