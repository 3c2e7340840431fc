import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertWritable, writeFileAtomic } from './atomic-write.js';
import { ReferenceTrainerError } from './errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rlvr-atomic-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  test('writes, and replaces an existing file whole', async () => {
    const p = join(dir, 'a.html');
    await writeFileAtomic(p, 'first');
    await writeFileAtomic(p, 'second');
    expect(await readFile(p, 'utf8')).toBe('second');
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  test('when the rename fails (target is a directory) the temporary file is removed', async () => {
    const sub = join(dir, 'sub');
    await mkdir(join(sub, 'out.html'), { recursive: true });
    await writeFile(join(sub, 'out.html', 'keep'), 'x');
    const err = (await writeFileAtomic(join(sub, 'out.html'), 'data').catch((e: unknown) => e)) as ReferenceTrainerError;
    expect(err).toBeInstanceOf(ReferenceTrainerError);
    expect(err.code).toBe('write_failed');
    expect(err.message).toContain(`${join(sub, 'out.html')} is a directory`);
    expect(await readdir(sub)).toEqual(['out.html']);
  });

  test('a missing directory', async () => {
    const p = join(dir, 'nope', 'a.html');
    await expect(writeFileAtomic(p, 'x')).rejects.toThrow(`cannot write ${p}: directory ${join(dir, 'nope')} does not exist`);
  });
});

describe('assertWritable', () => {
  test('gives the messages writeFileAtomic would', async () => {
    await expect(assertWritable(join(dir, 'fine.html'))).resolves.toBeUndefined();
    const file = join(dir, 'f');
    await writeFile(file, 'x');
    await expect(assertWritable(join(file, 'r.html'))).rejects.toThrow(`${file} is not a directory`);
    await expect(assertWritable(join(dir, 'missing', 'r.html'))).rejects.toThrow(`directory ${join(dir, 'missing')} does not exist`);
    await expect(assertWritable(dir)).rejects.toThrow(`${dir} is a directory`);
  });
});
