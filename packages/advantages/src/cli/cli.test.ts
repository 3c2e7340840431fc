import { beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { runCommands } from '@rlvr/core';
import { advantagesCommand } from './command.js';
import { interopBatch, type InteropRow } from '../interop.js';
import { prepareEstimator } from '../prepare.js';

// These tests run the real built CLI (dist/cli.js) as a child process.
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/rollouts.jsonl', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rlvr-advantages-cli-'));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], stdin?: string, nodeArgs: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.on('error', () => {}); // the CLI may stop reading early on a bad line
    child.stdin.end(stdin ?? '');
  });
}

const rowsOf = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as InteropRow);
const outputOf = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { advantages: number[]; weights?: number[] });

function library(rows: InteropRow[], estimator: string, config: Record<string, unknown> = {}) {
  const p = prepareEstimator(estimator, config);
  const { batch, signals } = interopBatch(rows, p.needs);
  const r = p.estimate(batch, signals);
  return rows.map((_, i) => ({
    advantages: Array.from(r.advantages.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!)),
    weights: Array.from(r.weights.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!)),
  }));
}

/** The CLI prints the shortest decimal of each float32, so reading it back as float32 is exact. */
function expectSame(
  cli: { advantages: number[]; weights?: number[] }[],
  lib: { advantages: number[]; weights: number[] }[],
  withWeights: boolean,
) {
  expect(cli.length).toBe(lib.length);
  cli.forEach((line, i) => {
    expect(line.advantages.map(Math.fround)).toEqual(lib[i]!.advantages);
    if (withWeights) expect(line.weights!.map(Math.fround)).toEqual(lib[i]!.weights);
    else expect(line.weights).toBeUndefined();
  });
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`build first: ${CLI} is missing (npx tsc -b packages/advantages)`);
});

// child processes: generous timeouts, the machine running CI may be busy
describe('rlvr-advantages', { timeout: 300_000 }, () => {
  const example = readFileSync(EXAMPLE, 'utf8');
  const exampleRows = rowsOf(example);

  it('writes one line per row, in order, equal to the library (grail, --weights, --in FILE)', async () => {
    const r = await run(['--estimator', 'grail', '--weights', '--in', EXAMPLE]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectSame(outputOf(r.stdout), library(exampleRows, 'grail'), true);
  });

  it('reads stdin and takes options from --config and flags, flags winning', async () => {
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ sigmaW: 1, symmetry: 'correct', wMax: 4 }));
    const r = await run(['--estimator', 'grpo+grail', '--config', config, '--symmetry', 'both', '--w-max=3', '--bessel', 'false'], example);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectSame(outputOf(r.stdout), library(exampleRows, 'grpo+grail', { sigmaW: 1, symmetry: 'both', wMax: 3, bessel: false }), false);
  });

  it('rejects an option the estimator does not have, before reading input (exit 2)', async () => {
    const config = join(dir, 'config-bad.json');
    writeFileSync(config, JSON.stringify({ sigmaW: 1, tau: 0.3 }));
    const r = await run(['--estimator', 'grail', '--config', config, '--w-min', 'low'], example);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/invalid estimator grail configuration: wMin: .*expected number.*unknown key: tau/);
  });

  it('computes oar-g and the plain baselines', async () => {
    for (const est of ['oar-g', 'rloo', 'reinforce-pp-baseline']) {
      const r = await run(['--estimator', est, '--weights', '--in', EXAMPLE]);
      expect(r.code).toBe(0);
      expectSame(outputOf(r.stdout), library(exampleRows, est), true);
    }
  });

  it('stops at a bad line with its number and reason, writing nothing of that group (exit 1)', async () => {
    const lines = example.trim().split('\n');
    // line 6 (group q2) gets a saliency array of the wrong length
    const bad = JSON.parse(lines[5]!) as InteropRow;
    bad.saliency = bad.saliency!.slice(1);
    lines[5] = JSON.stringify(bad);
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const r = await run(['--in', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rlvr-advantages: ${file}:6, field saliency: has ${bad.length - 1} entries but length is ${bad.length}\n`);
    expect(outputOf(r.stdout)).toHaveLength(4); // group q1 only: q2's first row (line 5) was never written
  });

  it('names the line for invalid JSON, a bad field, and a group that comes back', async () => {
    const r1 = await run([], '{"group":1,"reward":1,"length":0}\n{"group":1,"reward":\n');
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(/^rlvr-advantages: stdin:2: not JSON/);
    expect(r1.stdout).toBe('');
    const r2 = await run(['--estimator', 'grpo'], '{"group":1,"reward":"1","length":0}\n');
    expect(r2.stderr).toMatch(/stdin:1: reward: .*expected number, received string/);
    const r3 = await run(
      ['--estimator', 'grpo'],
      '{"group":"a","reward":1,"length":1}\n{"group":"b","reward":1,"length":1}\n{"group":"a","reward":0,"length":1}\n',
    );
    expect(r3.code).toBe(1);
    expect(r3.stderr).toMatch(/stdin:3, field group: group "a" appeared earlier, separated by other groups/);
    expect(outputOf(r3.stdout)).toHaveLength(2);
    const r4 = await run([], '{"group":1,"reward":1,"length":2}\n');
    expect(r4.stderr).toMatch(/stdin:1, field saliency: missing: the estimator needs a per-token saliency score/);
    const r5 = await run(['--estimator', 'grpo'], '{"group":1,"reward":1,"length":2,"extra":true}\n');
    expect(r5.stderr).toMatch(/stdin:1: unrecognized key|stdin:1: unknown key: extra/);
  });

  it('reports a missing input file (exit 1, naming it) and reads nothing from an empty input (exit 0)', async () => {
    const missing = join(dir, 'missing.jsonl');
    const r = await run(['--in', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rlvr-advantages: ${missing}: cannot read: no such file\n`);
    const empty = await run(['--estimator', 'grpo'], '\n\n');
    expect([empty.code, empty.stdout, empty.stderr]).toEqual([0, '', '']);
  });

  it('lists an unknown estimator’s alternatives (exit 2)', async () => {
    const r = await run(['--estimator', 'grial']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown advantage estimator "grial"; known estimators: dr-grpo, grail, grpo, oar-g/);
  });

  it('emits a group as soon as the next one starts, before the input ends (a real pipe)', async () => {
    const child = spawn(process.execPath, [CLI, '--estimator', 'grail'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    const firstGroup = exampleRows.filter((r) => r.group === 'q1');
    const firstOfNext = exampleRows.find((r) => r.group === 'q2')!;
    const sawFour = new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.split('\n').length - 1 >= 4) resolve();
      }),
    );
    for (const row of [...firstGroup, firstOfNext]) child.stdin.write(JSON.stringify(row) + '\n');
    // stdin stays open: the CLI cannot have seen the end of its input
    await sawFour;
    expect(outputOf(stdout)).toHaveLength(4);
    expect(child.exitCode).toBeNull();
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(outputOf(stdout)).toHaveLength(5);
  });

  it('streams a large input under a heap too small to hold it; the buffering (batch-whitened) estimator does not fit', async () => {
    // 40,000 rows x 32 tokens (about 12 MB of JSONL) through a 16 MB heap
    const sal = JSON.stringify(Array.from({ length: 32 }, (_, t) => 0.01 + (t % 7) * 0.013));
    const spans = JSON.stringify({ open: [27, 28], content: [28, 30], close: [30, 31] });
    const parts: string[] = [];
    for (let i = 0; i < 40_000; i++)
      parts.push(`{"group":${i >> 2},"reward":${i % 3 === 0 ? 1 : 0},"length":32,"saliency":${sal},"spans":${spans}}\n`);
    const input = parts.join('');
    const streamed = await run(['--estimator', 'grail'], input, ['--max-old-space-size=16']);
    expect(streamed.stderr).toBe('');
    expect(streamed.code).toBe(0);
    expect(streamed.stdout.split('\n').length - 1).toBe(40_000);
    const buffered = await run(['--estimator', 'reinforce-pp-baseline+grail'], input, ['--max-old-space-size=16']);
    expect(buffered.code === 0 && buffered.signal === null).toBe(false);
  }, 300_000);

  it('prints help with every part’s options and defaults', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/oar-g: .*--tau \(default 0\.4\)/);
    expect(r.stdout).toMatch(/--floor \(default 0\.1\)/);
    expect(r.stdout).toMatch(/grpo: --bessel \(default true\), --std-eps \(default 0\.000001\), --scale-rewards \(default "group"\)/);
  });

  it('refuses a flag that is no option with a usage error (exit 2), __proto__ and constructor included', async () => {
    for (const flag of ['--__proto__', '--constructor', '--sigmaw']) {
      const r = await run([flag, '1'], '');
      expect([flag, r.code]).toEqual([flag, 2]);
      expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^rlvr-advantages: Unknown option '${flag}'`));
      expect(r.stderr.split('\n')[1]).toBe('(rlvr-advantages --help lists the options)');
      expect(r.stdout).toBe('');
    }
  });

  it('reads the whole input first when the configuration couples the batch (grpo with a batch std)', async () => {
    const r = await run(['--estimator', 'grpo', '--scale-rewards', 'batch', '--in', EXAMPLE]);
    expect(r.stderr).toBe('');
    expectSame(outputOf(r.stdout), library(exampleRows, 'grpo', { scaleRewards: 'batch' }), false);
    // group by group, each group's own std would give other numbers
    const perGroup = library(
      exampleRows.filter((row) => row.group === 'q1'),
      'grpo',
      { scaleRewards: 'batch' },
    );
    expect(outputOf(r.stdout)[0]!.advantages.map(Math.fround)).not.toEqual(perGroup[0]!.advantages);
  });

  it('is a Command the rlvr CLI composes: the same code in process (rlvr advantages)', async () => {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      stdin: Readable.from([example]),
    };
    const code = await runCommands(
      'rlvr',
      { advantages: advantagesCommand },
      ['advantages', '--estimator', 'rloo+grail', '--symmetry', 'both', '--weights'],
      io,
    );
    expect([code, stderr]).toEqual([0, '']);
    expectSame(outputOf(stdout), library(exampleRows, 'rloo+grail', { symmetry: 'both' }), true);
    const bad = await runCommands('rlvr', { advantages: advantagesCommand }, ['advantages', '--symmetry', 'all'], {
      ...io,
      stdin: Readable.from(['']),
    });
    expect(bad).toBe(2);
    expect(stderr).toMatch(
      /^rlvr advantages: invalid estimator grail configuration: symmetry: must be one of "wrong", "correct", "both" \(got "all"\)/,
    );
  });
});
