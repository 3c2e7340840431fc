import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AtomicWriter, assertCreatable, assertWritable, createDirectory, writeFileAtomic, writeFileAtomicSync } from './files.js';
import { CoreError } from './errors.js';

const scratch = (): Promise<string> => mkdtemp(join(tmpdir(), 'rlvr-core-files-'));

describe('writeFileAtomic', () => {
  it('writes the whole file and leaves no temporary file', async () => {
    const dir = await scratch();
    await writeFileAtomic(join(dir, 'a.json'), '{"x":1}\n');
    await writeFileAtomic(join(dir, 'a.json'), new Uint8Array([104, 105]));
    expect(await readFile(join(dir, 'a.json'), 'utf8')).toBe('hi');
    expect(await readdir(dir)).toEqual(['a.json']);
  });

  it('names the file and the reason in one line when the directory is missing or the target is a directory', async () => {
    const dir = await scratch();
    const missing = join(dir, 'nope', 'a.json');
    await expect(writeFileAtomic(missing, 'x')).rejects.toThrow(
      new CoreError('write_failed', `cannot write: directory ${join(dir, 'nope')} does not exist`, { file: missing }),
    );
    await mkdir(join(dir, 'd'));
    await expect(writeFileAtomic(join(dir, 'd'), 'x')).rejects.toThrow(/d: cannot write: .*d is a directory$/);
    await expect(assertWritable(join(dir, 'd'))).rejects.toMatchObject({ code: 'write_failed', location: { file: join(dir, 'd') } });
    expect(await readdir(dir)).toEqual(['d']);
  });
});

describe('writeFileAtomicSync', () => {
  it('writes the pieces in order, replaces the old file and leaves no temporary file', async () => {
    const dir = await scratch();
    const path = join(dir, 'w.bin');
    await writeFile(path, 'old');
    writeFileAtomicSync(path, ['ab', new Uint8Array([99, 100]), '', 'e']);
    expect(await readFile(path, 'utf8')).toBe('abcde');
    writeFileAtomicSync(path, 'x');
    expect(await readFile(path, 'utf8')).toBe('x');
    expect(await readdir(dir)).toEqual(['w.bin']);
  });

  it('fails with write_failed naming the file, leaving the target and the directory as they were', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'file'), 'keep');
    const under = join(dir, 'file', 'a.bin'); // a path under a regular file: ENOTDIR, even as root
    expect(() => writeFileAtomicSync(under, 'x')).toThrow(
      new CoreError('write_failed', `cannot write: ${join(dir, 'file')} is not a directory`, { file: under }),
    );
    expect(() => writeFileAtomicSync(join(dir, 'nope', 'a.bin'), 'x')).toThrow(/cannot write: directory .*nope does not exist$/);
    expect(await readdir(dir)).toEqual(['file']);
    expect(await readFile(join(dir, 'file'), 'utf8')).toBe('keep');
  });
});

describe('AtomicWriter', () => {
  it('shows nothing at the target until commit, and abort leaves the old file as it was', async () => {
    const dir = await scratch();
    const path = join(dir, 'out.jsonl');
    await writeFile(path, 'old\n');
    const w = await AtomicWriter.open(path);
    for (let i = 0; i < 20_000; i++) await w.write(`{"i":${i}}\n`);
    expect(await readFile(path, 'utf8')).toBe('old\n');
    await w.abort();
    expect(await readFile(path, 'utf8')).toBe('old\n');
    expect(await readdir(dir)).toEqual(['out.jsonl']);

    const w2 = await AtomicWriter.open(path);
    await w2.write('a\n');
    await w2.write(new TextEncoder().encode('b\n'));
    await w2.commit();
    expect(await readFile(path, 'utf8')).toBe('a\nb\n');
    await expect(w2.write('c')).rejects.toMatchObject({ code: 'write_failed' });
  });

  it('refuses a directory target before anything is written', async () => {
    const dir = await scratch();
    await expect(AtomicWriter.open(dir)).rejects.toMatchObject({ code: 'write_failed' });
  });
});

describe('createDirectory and assertCreatable', () => {
  it('create a directory and its parents; under a file, both fail with the same message and create nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-mkdir-'));
    await assertCreatable(join(dir, 'a', 'b'));
    await createDirectory(join(dir, 'a', 'b'));
    expect(await readdir(join(dir, 'a'))).toEqual(['b']);
    await writeFile(join(dir, 'file'), 'x');
    const under = join(dir, 'file', 'run');
    const message = `${under}: cannot create the output directory ${under}: a path component is a file, not a directory`;
    await expect(assertCreatable(under)).rejects.toThrow(new CoreError('write_failed', message.slice(under.length + 2), { file: under }));
    await expect(createDirectory(under)).rejects.toThrow(message);
    await expect(assertCreatable(join(dir, 'file'))).rejects.toThrow('a path component is a file, not a directory');
  });

  // node's recursive mkdir retries /proc/x forever (ENOENT under an existing parent); this one rejects
  it.runIf(existsSync('/proc/self'))(
    'a directory the file system refuses under an existing parent (/proc/x) rejects, naming it',
    async () => {
      await expect(createDirectory('/proc/rlvr-x/run')).rejects.toThrow(
        /^\/proc\/rlvr-x\/run: cannot create the output directory \/proc\/rlvr-x\/run: /,
      );
    },
    60_000,
  );
});
