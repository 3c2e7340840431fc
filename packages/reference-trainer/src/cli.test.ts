import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLI, rlvr } from './test-utils/run-cli.js';

let root: string;
let runDir: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-cli-'));
  runDir = join(root, 'run');
  await mkdir(runDir);
  await writeFile(
    join(runDir, 'metrics.jsonl'),
    '{"step":0,"reward/mean":0.25,"accuracy":0.3}\n{"step":1,"reward/mean":0.5,"accuracy":0.4}\n',
  );
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rlvr report (the @rlvr/report command; its own tests are there)', () => {
  test('writes RUN_DIR/report.html and says where; errors are one line', async () => {
    const r = await rlvr('report', runDir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('rlvr report: warning: no data for loss/* in metrics.jsonl\n');
    expect(r.stdout).toMatch(new RegExp(`^wrote ${join(runDir, 'report.html')} \\(\\d+\\.\\d kB, \\d+ charts\\)\\n$`));
    expect(await readFile(join(runDir, 'report.html'), 'utf8')).toContain('<h1>rlvr report: run</h1>');
    const missing = await rlvr('report', '/nonexistent/run');
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: 'rlvr report: /nonexistent/run: run directory /nonexistent/run does not exist\n',
    });
  });

  test('--help, and the command list', async () => {
    const r = await rlvr('report', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--out FILE');
    const top = await rlvr();
    expect(top.code).toBe(2);
    expect(top.stderr).toContain('usage: rlvr COMMAND [options]');
    const unknown = await rlvr('trian');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'rlvr: unknown command "trian" (did you mean train?); known: train, compare, credit, eval, pretrain, report, verify, advantages\n',
    );
  });
});
