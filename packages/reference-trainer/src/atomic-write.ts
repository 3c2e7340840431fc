import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ReferenceTrainerError } from './errors.js';

/**
 * Write `data` to `path` all or nothing: a temporary file beside it, flushed,
 * then renamed over `path`. On failure the temporary file is removed and a
 * `ReferenceTrainerError('write_failed')` says why in one line. The directory
 * must exist: a mistyped `--out` should fail, not create a tree.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let created = false;
  try {
    const fh = await open(tmp, 'wx');
    created = true;
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    if (created) await rm(tmp, { force: true }).catch(() => {});
    throw new ReferenceTrainerError('write_failed', `cannot write ${path}: ${reason(err, path, dir)}`, { file: path }, { cause: err });
  }
}

/**
 * Fail early, with the same one-line message `writeFileAtomic` would give, when
 * `path` clearly cannot be written: its directory is missing, not a directory or
 * not writable, or `path` is itself a directory. Saves rendering a report that
 * could not be saved; `writeFileAtomic` still guards the write itself.
 */
export async function assertWritable(path: string): Promise<void> {
  const dir = dirname(path);
  try {
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await access(dir, constants.W_OK);
    const target = await stat(path).catch(() => null);
    if (target?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  } catch (err) {
    throw new ReferenceTrainerError('write_failed', `cannot write ${path}: ${reason(err, path, dir)}`, { file: path }, { cause: err });
  }
}

function reason(err: unknown, path: string, dir: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return `directory ${dir} does not exist`;
    case 'ENOTDIR':
      return `${dir} is not a directory`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return `directory ${dir} is not writable (${code})`;
    case 'EISDIR':
      return `${path} is a directory`;
    case 'ENOSPC':
      return 'no space left on device';
    default:
      return (err as Error).message;
  }
}
