import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
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
