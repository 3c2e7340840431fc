import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readConfigFile, readConfigObject } from './config-file.js';
import { CoreError } from './errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rlvr-config-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readConfigFile / readConfigObject', () => {
  test('a JSON object is read; no file is {}', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '{"steps": 3, "trainer": {"lr": 1}}');
    expect(await readConfigObject(file)).toEqual({ steps: 3, trainer: { lr: 1 } });
    expect(await readConfigObject(undefined)).toEqual({});
  });

  test('a missing file, bad JSON and a non-object are one-line errors naming the file', async () => {
    const missing = join(dir, 'nope.json');
    await expect(readConfigFile(missing)).rejects.toThrow(
      new CoreError('read_failed', 'cannot read config: no such file', { file: missing }),
    );
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"steps": ');
    await expect(readConfigFile(bad)).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(/^.*bad\.json: config is not JSON: /),
    });
    const list = join(dir, 'list.json');
    await writeFile(list, '[1]');
    await expect(readConfigObject(list)).rejects.toThrow(`${list}: config must be a JSON object`);
  });
});
