import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeSyntheticRun } from './test-utils/synthetic-run.js';

/** The built bin (nx builds the package before its tests). */
const BIN = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** `rlvr-report ...args` as a child process, colour off: exit code, stdout, stderr. */
function report(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

let root: string;
let runDir: string;
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -b packages/report)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-report-cli-'));
  runDir = (await writeSyntheticRun(join(root, 'run'), { steps: 20, sampleSteps: [19], rolloutsPerStep: 6 })).dir;
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rlvr-report', () => {
  test('writes RUN_DIR/report.html and says where', async () => {
    const r = await report(runDir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^wrote ${join(runDir, 'report.html')} \\(\\d+\\.\\d kB, 17 charts\\)\\n$`));
    expect(await readFile(join(runDir, 'report.html'), 'utf8')).toContain('<h1>rlvr report: run</h1>');
  });

  test('--out, --title, --bins, --quiet', async () => {
    const out = join(root, 'custom.html');
    const r = await report(runDir, '--out', out, '--title', 'My <run>', '--bins', '10', '-q');
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    const page = await readFile(out, 'utf8');
    expect(page).toContain('<title>rlvr report: My &lt;run&gt;</title>');
    expect(page.match(/<tr data-bin=/g)).toHaveLength(10);
  });

  test('warnings about missing data go to stderr, the report is still written', async () => {
    const dir = join(root, 'metrics-only');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"reward/mean":0.5}\n');
    const r = await report(dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('rlvr-report: warning: no data for token weights: no samples.jsonl in the run directory\n');
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
  });

  test.each([
    ['a missing run directory', ['/nonexistent/run'], 1, 'rlvr-report: /nonexistent/run: run directory /nonexistent/run does not exist'],
    ['no run directory', [], 2, 'rlvr-report: expected one RUN_DIR, got none'],
    ['an unknown flag', ['.', '--colour'], 2, "rlvr-report: Unknown option '--colour'"],
    ['a bad integer', ['.', '--bins', 'ten'], 2, 'rlvr-report: --bins: must be an integer (got "ten")'],
    [
      'an out-of-range option',
      ['.', '--bins', '1', '--samples=-3'],
      2,
      'rlvr-report: --bins: Too small: expected number to be >=2 (got 1); --samples: Too small: expected number to be >=0 (got -3)',
    ],
  ])('%s: exit code, the message naming the flag, then one line naming --help for a usage error', async (_what, args, code, line) => {
    const r = await report(...args);
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(line);
    if (code === 2) expect(lines.slice(1)).toEqual(['(rlvr-report --help lists the options)']);
    else expect(lines).toHaveLength(1);
  });

  test('an empty metrics.jsonl: exit 1, one line, no page', async () => {
    const dir = join(root, 'empty');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '');
    const r = await report(dir);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `rlvr-report: ${join(dir, 'metrics.jsonl')}: no records: the run has logged nothing to report yet\n`,
    });
    expect(await readdir(dir)).toEqual(['metrics.jsonl']);
  });

  test('a bad metrics line: file, line and field in one line, nothing written', async () => {
    const dir = join(root, 'bad');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"entropy":1}\n{"step":1,"entropy":"high"}\n');
    const r = await report(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^rlvr-report: ${join(dir, 'metrics.jsonl')}:2, field entropy: [^\\n]*\\n$`));
    expect(await readdir(dir)).toEqual(['metrics.jsonl']);
  });

  test('a torn last line (a crash while writing) names its line', async () => {
    const dir = join(root, 'torn');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"entropy":1}\n{"step":1,"entr');
    const r = await report(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^rlvr-report: ${join(dir, 'metrics.jsonl')}:2: not JSON: [^\\n]*\\n$`));
  });

  test('missing metrics.jsonl', async () => {
    const dir = join(root, 'no-metrics');
    await mkdir(dir);
    const r = await report(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rlvr-report: ${join(dir, 'metrics.jsonl')}: run directory ${dir} has no metrics.jsonl\n`);
  });

  test('an unwritable output directory: one line, no partial file', async () => {
    const out = join(runDir, 'metrics.jsonl', 'report.html');
    const before = await readdir(runDir);
    const r = await report(runDir, '--out', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rlvr-report: ${out}: cannot write: ${join(runDir, 'metrics.jsonl')} is not a directory\n`);
    expect(await readdir(runDir)).toEqual(before);
  });

  test('--help prints the options', async () => {
    const r = await report('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--out FILE');
    expect(r.stderr).toBe('');
  });
});
