import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { repairLogs } from './run-files.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-run-files-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('run-directory I/O', () => {
  test('repairLogs cuts a torn line and records past the step, says what it cut, leaves a clean log alone', async () => {
    const a = join(root, 'a.jsonl');
    const b = join(root, 'b.jsonl');
    await writeFile(a, '{"step":0}\n{"step":1}\n{"step":2}\n{"step":3}\n{"st');
    await writeFile(b, '{"step":0}\n{"step":1}\n');
    const notes = await repairLogs([a, b, join(root, 'missing.jsonl')], 1);
    expect(notes).toEqual([`${a}: cut a torn last line (4 bytes) and 2 records after step 1; 2 kept`]);
    expect(await readFile(a, 'utf8')).toBe('{"step":0}\n{"step":1}\n');
    expect(await readFile(b, 'utf8')).toBe('{"step":0}\n{"step":1}\n');
  });
});
