import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLI, rlvr } from './test-utils/run-cli.js';
import { writeSyntheticRun } from './test-utils/synthetic-run.js';

let root: string;
let runDir: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-cli-'));
  runDir = (await writeSyntheticRun(join(root, 'run'), { steps: 20, sampleSteps: [19], rolloutsPerStep: 6 })).dir;
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rlvr report', () => {
  test('writes RUN_DIR/report.html and says where', async () => {
    const r = await rlvr('report', runDir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^wrote ${join(runDir, 'report.html')} \\(\\d+\\.\\d kB, 16 charts\\)\\n$`));
    expect(await readFile(join(runDir, 'report.html'), 'utf8')).toContain('<h1>rlvr report: run</h1>');
  });

  test('--out, --title, --bins, --quiet', async () => {
    const out = join(root, 'custom.html');
    const r = await rlvr('report', runDir, '--out', out, '--title', 'My <run>', '--bins', '10', '-q');
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    const page = await readFile(out, 'utf8');
    expect(page).toContain('<title>rlvr report: My &lt;run&gt;</title>');
    expect(page.match(/<tr data-bin=/g)).toHaveLength(10);
  });

  test('warnings about missing data go to stderr, the report is still written', async () => {
    const dir = join(root, 'metrics-only');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"reward/mean":0.5}\n');
    const r = await rlvr('report', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('rlvr report: warning: no data for token weights: no samples.jsonl in the run directory\n');
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
  });

  test.each([
    ['a missing run directory', ['report', '/nonexistent/run'], 1, 'rlvr report: /nonexistent/run: run directory /nonexistent/run does not exist'],
    ['no run directory', ['report'], 2, 'rlvr report: expected one RUN_DIR, got none'],
    ['an unknown flag', ['report', '.', '--colour'], 2, "rlvr report: Unknown option '--colour'"],
    ['a bad integer', ['report', '.', '--bins', 'ten'], 2, 'rlvr report: --bins must be an integer, got "ten"'],
    ['an out-of-range option', ['report', '.', '--bins', '1'], 2, 'rlvr report: invalid report options: positionBins: Too small'],
    ['an unknown command', ['trian'], 2, 'rlvr trian: unknown command "trian" (available: train, eval, compare, pretrain, report, verify, advantages)'],
  ])('%s: non-zero exit and one line on stderr', async (_what, args, code, line) => {
    const r = await rlvr(...args);
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr.endsWith('\n')).toBe(true);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr.startsWith(line)).toBe(true);
  });

  test('a bad metrics line: file, line and field in one line, nothing written', async () => {
    const dir = join(root, 'bad');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"entropy":1}\n{"step":1,"entropy":"high"}\n');
    const r = await rlvr('report', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^rlvr report: ${join(dir, 'metrics.jsonl')}:2, field entropy: .*\\n$`));
    expect(await readdir(dir)).toEqual(['metrics.jsonl']);
  });

  test('missing metrics.jsonl', async () => {
    const dir = join(root, 'no-metrics');
    await mkdir(dir);
    const r = await rlvr('report', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rlvr report: ${join(dir, 'metrics.jsonl')}: run directory ${dir} has no metrics.jsonl\n`);
  });

  test('an unwritable output directory: one line, no partial file', async () => {
    const out = join(runDir, 'metrics.jsonl', 'report.html');
    const before = await readdir(runDir);
    const r = await rlvr('report', runDir, '--out', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`rlvr report: ${out}: cannot write ${out}: ${join(runDir, 'metrics.jsonl')} is not a directory\n`);
    expect(await readdir(runDir)).toEqual(before);
  });

  test('--help prints the options', async () => {
    const r = await rlvr('report', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--out FILE');
    const top = await rlvr();
    expect(top.code).toBe(2);
    expect(top.stderr).toContain('usage: rlvr <command>');
  });
});
