/**
 * Files written whole or not at all. Every write goes to a temporary file beside the target (same
 * directory, so the rename is atomic), is flushed to disk, then renamed over the target; on any
 * failure the temporary file is removed and a `CoreError('write_failed')` names the file and why,
 * in one line. Temporary files still open when the process is interrupted are removed by
 * `removePendingTempFiles()`, which the CLI runner calls on SIGINT / SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { access, mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CoreError } from './errors.js';

const pending = new Set<string>();

/** Remove every temporary file an unfinished atomic write left (synchronous: safe in a signal handler). */
export function removePendingTempFiles(): void {
  for (const tmp of pending) rmSync(tmp, { force: true });
  pending.clear();
}

/** The temporary name a write of `path` uses: hidden, beside it, unique per process and call. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** Why a file operation on `path` failed, in words a user can act on. */
export function describeFsError(err: unknown, path: string): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const dir = dirname(path);
  switch (code) {
    case 'ENOENT':
      return `directory ${dir} does not exist`;
    case 'ENOTDIR':
      return `${dir} is not a directory`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return `${dir} is not writable (${code})`;
    case 'EISDIR':
      return `${path} is a directory`;
    case 'ENOSPC':
      return 'no space left on device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

function writeFailed(path: string, err: unknown): CoreError {
  if (err instanceof CoreError && err.code === 'write_failed') return err;
  return new CoreError('write_failed', `cannot write: ${describeFsError(err, path)}`, { file: path }, { cause: err });
}

/**
 * Fail early, with the message a write would give, when `path` clearly cannot be written: its
 * directory is missing, not a directory or not writable, or `path` is itself a directory. Lets a
 * command refuse a bad `--out` before doing the work; the write itself stays guarded.
 */
export async function assertWritable(path: string): Promise<void> {
  const dir = dirname(path);
  try {
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await access(dir, constants.W_OK);
    const target = await stat(path).catch(() => null);
    if (target?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  } catch (err) {
    throw writeFailed(path, err);
  }
}

/** Write `data` to `path` all or nothing (temporary file, fsync, rename, fsync of the directory). */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const writer = await AtomicWriter.open(path);
  try {
    await writer.write(data);
    await writer.commit();
  } catch (err) {
    await writer.abort();
    throw writeFailed(path, err);
  }
}

/**
 * `writeFileAtomic` for synchronous callers (checkpoint writers inside a synchronous save): the
 * same temporary file, fsync, rename and `write_failed` error. `data` may come in pieces (the
 * buffers of a large safetensors file), written one after another, never concatenated.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array | readonly (string | Uint8Array)[]): void {
  const tmp = tempPathFor(path);
  let fd: number | null = null;
  try {
    fd = openSync(tmp, 'wx');
    pending.add(tmp);
    for (const piece of typeof data === 'string' || data instanceof Uint8Array ? [data] : data) {
      const b = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
      let off = 0;
      while (off < b.length) off += writeSync(fd, b, off, b.length - off);
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(tmp, path);
    pending.delete(tmp);
  } catch (err) {
    if (fd !== null) closeSync(fd);
    try {
      rmSync(tmp, { force: true });
    } catch {
      // never created (its directory is missing or not one)
    }
    pending.delete(tmp);
    throw writeFailed(path, err);
  }
}

/**
 * A file written in pieces (a CLI's `-o` output) that appears only when `commit()` succeeds. Each
 * `write` awaits the disk, so memory stays bounded and no stream listeners pile up; small pieces are
 * gathered into 64 KiB writes. `abort()` (also after a failed write) removes the temporary file.
 */
export class AtomicWriter {
  readonly path: string;
  readonly #tmp: string;
  #fh: FileHandle | null;
  #buffer: string[] = [];
  #buffered = 0;
  #done = false;

  private constructor(path: string, tmp: string, fh: FileHandle) {
    this.path = path;
    this.#tmp = tmp;
    this.#fh = fh;
  }

  /** Open a temporary file for `path`. Throws `write_failed` at once when `path` cannot be written. */
  static async open(path: string): Promise<AtomicWriter> {
    await assertWritable(path);
    const tmp = tempPathFor(path);
    try {
      const fh = await open(tmp, 'wx');
      pending.add(tmp);
      return new AtomicWriter(path, tmp, fh);
    } catch (err) {
      throw writeFailed(path, err);
    }
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.#done || this.#fh === null) throw new CoreError('write_failed', 'cannot write: already closed', { file: this.path });
    try {
      if (typeof data === 'string') {
        this.#buffer.push(data);
        this.#buffered += data.length;
        if (this.#buffered >= 65_536) await this.#flush();
      } else {
        await this.#flush();
        await this.#fh.write(data);
      }
    } catch (err) {
      await this.abort();
      throw writeFailed(this.path, err);
    }
  }

  async #flush(): Promise<void> {
    if (this.#buffered === 0 || this.#fh === null) return;
    const text = this.#buffer.join('');
    this.#buffer = [];
    this.#buffered = 0;
    await this.#fh.write(text, null, 'utf8');
  }

  /** Flush, fsync and rename into place. */
  async commit(): Promise<void> {
    if (this.#done || this.#fh === null) throw new CoreError('write_failed', 'cannot write: already closed', { file: this.path });
    try {
      await this.#flush();
      await this.#fh.sync();
      await this.#fh.close();
      this.#fh = null;
      await rename(this.#tmp, this.path);
      pending.delete(this.#tmp);
      this.#done = true;
      await syncDir(dirname(this.path));
    } catch (err) {
      await this.abort();
      throw writeFailed(this.path, err);
    }
  }

  /** Drop what was written; the target is untouched. Safe to call more than once. */
  async abort(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    const fh = this.#fh;
    this.#fh = null;
    await fh?.close().catch(() => undefined);
    await rm(this.#tmp, { force: true }).catch(() => undefined);
    pending.delete(this.#tmp);
  }
}

/** Make a rename durable (best effort: some file systems refuse to open a directory). */
async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // not supported here: the rename is still atomic, only its durability after a crash is weaker
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** Create directory `dir` (and its parents); a failure is a `CoreError('write_failed')` saying why in words. */
export async function createDirectory(dir: string): Promise<void> {
  try {
    await mkdirParents(resolve(dir));
  } catch (err) {
    throw new CoreError('write_failed', `cannot create the output directory ${dir}: ${mkdirReason(err)}`, { file: dir }, { cause: err });
  }
}

/**
 * Fail before any work, with the message `createDirectory` would give, when `dir` could not be
 * created: its nearest existing ancestor is a file or not writable.
 */
export async function assertCreatable(dir: string): Promise<void> {
  let p = resolve(dir);
  for (;;) {
    const st = await stat(p).catch(() => null);
    if (st !== null) {
      const fail = (code: string) => {
        throw new CoreError(
          'write_failed',
          `cannot create the output directory ${dir}: ${mkdirReason(Object.assign(new Error(code), { code }))}`,
          { file: dir },
        );
      };
      if (!st.isDirectory()) fail(p === resolve(dir) ? 'EEXIST' : 'ENOTDIR');
      await access(p, constants.W_OK).catch(() => fail('EACCES'));
      return;
    }
    const up = dirname(p);
    if (up === p) return;
    p = up;
  }
}

/**
 * `mkdir -p` one level at a time: node's `mkdir(dir, { recursive: true })` never settles where the
 * parent exists but the child cannot be made with ENOENT (`/proc/x`: it retries the parent forever).
 */
async function mkdirParents(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let p = dir; ; p = dirname(p)) {
    const st = await stat(p).catch(() => null);
    if (st !== null) break;
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing.reverse()) {
    await mkdir(p).catch(async (err: NodeJS.ErrnoException) => {
      // made meanwhile by someone else: fine if it is a directory
      if (err.code !== 'EEXIST' || !(await stat(p)).isDirectory()) throw err;
    });
  }
  if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'EEXIST' });
}

function mkdirReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'the file system refuses a directory there (ENOENT)';
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a path component is a file, not a directory';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'permission denied';
  return (err as Error).message;
}
