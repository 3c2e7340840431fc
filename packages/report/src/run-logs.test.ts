import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clearRunLogs, recordedSteps, repairRunLogs } from './run-logs.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-run-logs-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('run logs', () => {
  test('repairRunLogs cuts a torn line and records past the step, says what it cut, leaves a clean log alone', async () => {
    const a = join(root, 'a.jsonl');
    const b = join(root, 'b.jsonl');
    await writeFile(a, '{"step":0}\n{"step":1}\n{"step":2}\n{"step":3}\n{"st');
    await writeFile(b, '{"step":0}\n{"step":1}\n');
    const notes = await repairRunLogs([a, b, join(root, 'missing.jsonl')], 1);
    expect(notes).toEqual([`${a}: cut a torn last line (4 bytes) and 2 records after step 1; 2 kept`]);
    expect(await readFile(a, 'utf8')).toBe('{"step":0}\n{"step":1}\n');
    expect(await readFile(b, 'utf8')).toBe('{"step":0}\n{"step":1}\n');
  });

  test('recordedSteps names the logs holding a training step, with the highest; step 0, a torn line and a missing file record none', async () => {
    const metrics = join(root, 'metrics.jsonl');
    const evals = join(root, 'evals.jsonl');
    const only0 = join(root, 'samples.jsonl');
    await writeFile(metrics, '{"step":0}\n{"step":4}\n{"step":2}\n{"st');
    await writeFile(evals, '{"step":0}\nnot json\n{"step":3}\n');
    await writeFile(only0, '{"step":0}\n{"other":9}\n');
    expect(await recordedSteps([metrics, evals, only0, join(root, 'missing.jsonl')])).toEqual([
      { file: metrics, lastStep: 4 },
      { file: evals, lastStep: 3 },
    ]);
    await clearRunLogs([metrics, join(root, 'missing.jsonl')]);
    expect(existsSync(metrics)).toBe(false);
  });
});
