/**
 * JSON Lines in and out: one reader for every package (files and stdin, UTF-8 BOM, CRLF, blank
 * lines skipped, errors naming file and line), appending to a log, and the repair a resumed run
 * needs after a crash or a full disk left a torn last line.
 */
import { createReadStream } from 'node:fs';
import { appendFile, open, readFile, truncate } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { CoreError } from './errors.js';
import { describeFsError } from './files.js';

/**
 * A stream of text or bytes to read lines from: a Node `Readable` (`process.stdin`, a socket) or any async
 * iterable of chunks. Typed without Node's declarations, so that a project without `@types/node` compiles.
 */
export type TextSource = AsyncIterable<string | Uint8Array>;

/** One parsed JSONL line with its 1-based line number. */
export interface JsonlLine {
  line: number;
  value: unknown;
  /** With `invalidLines: 'yield'`: set (and `value` undefined) for a line that is not JSON, the error it would have thrown. */
  error?: CoreError;
}

export interface ReadJsonlOptions {
  /** Name used in error messages when `source` is a stream (default `<stdin>`). */
  name?: string;
  /** A line longer than this many characters is refused with its line number (default: no limit). */
  maxLineChars?: number;
  /**
   * A line that is not JSON: `throw` (default) ends the read with its error; `yield` hands it to the caller as
   * `{ line, value: undefined, error }` and reads on (a command that answers each line, bad ones with an error row).
   */
  invalidLines?: 'throw' | 'yield';
}

/**
 * Stream a JSONL file (a path) or stream line by line; memory stays at one line. Blank lines are
 * skipped (they still count for line numbers); a UTF-8 byte order mark is dropped. A line that is not
 * JSON, or a file that cannot be opened, throws `CoreError('read_failed')` naming the file and line.
 */
export async function* readJsonl(source: string | TextSource, opts: ReadJsonlOptions = {}): AsyncGenerator<JsonlLine> {
  const file = typeof source === 'string' ? source : (opts.name ?? '<stdin>');
  const stream =
    typeof source === 'string'
      ? createReadStream(source, { encoding: 'utf8' })
      : source instanceof Readable
        ? source
        : Readable.from(source);
  if (typeof source === 'string') {
    const opened = new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    try {
      await opened;
    } catch (cause) {
      throw new CoreError('read_failed', `cannot read: ${describeReadError(cause)}`, { file }, { cause });
    }
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const raw of lines) {
      line++;
      const text = line === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (opts.maxLineChars !== undefined && text.length > opts.maxLineChars) {
        throw new CoreError('read_failed', `line is ${text.length} characters, over the limit of ${opts.maxLineChars}`, { file, line });
      }
      if (text.trim() === '') continue;
      if (opts.invalidLines !== 'yield') {
        yield { line, value: parseLine(text, file, line) };
        continue;
      }
      let parsed: JsonlLine;
      try {
        parsed = { line, value: parseLine(text, file, line) };
      } catch (error) {
        parsed = { line, value: undefined, error: error as CoreError };
      }
      yield parsed;
    }
  } catch (cause) {
    if (cause instanceof CoreError) throw cause;
    throw new CoreError('read_failed', `cannot read: ${describeReadError(cause)}`, { file, line: line + 1 }, { cause });
  } finally {
    lines.close();
    if (typeof source === 'string') stream.destroy();
  }
}

/** Parse a whole JSONL text (already in memory), with the same rules and errors as `readJsonl`. */
export function parseJsonl(text: string, file = '<input>'): JsonlLine[] {
  const out: JsonlLine[] = [];
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!;
    if (t.trim() !== '') out.push({ line: i + 1, value: parseLine(t, file, i + 1) });
  }
  return out;
}

function parseLine(text: string, file: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new CoreError('read_failed', `not JSON: ${(cause as Error).message}`, { file, line }, { cause });
  }
}

function describeReadError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code})`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Append `records` to the JSONL log `file`, one line each (nothing for none). A failure is a
 * `CoreError('write_failed')` naming the file in words (`metrics.jsonl: cannot write: no space left
 * on device`, not `ENOSPC ... write`).
 */
export async function appendJsonl(file: string, records: readonly unknown[]): Promise<void> {
  if (records.length === 0) return;
  try {
    await appendFile(file, records.map((r) => JSON.stringify(r) + '\n').join(''));
  } catch (err) {
    throw new CoreError('write_failed', `cannot write: ${describeFsError(err, file)}`, { file }, { cause: err });
  }
}

/** What `repairJsonl` changed: nothing (`droppedLines` 0), or the lines it cut from the end. */
export interface JsonlRepair {
  /** complete lines kept */
  keptLines: number;
  /** lines removed from the end: a torn last line, and lines `keep` refused */
  droppedLines: number;
  droppedBytes: number;
}

/**
 * Bring an append-only JSONL log back to a state a resumed run can extend: cut a torn last line (no
 * newline, or not JSON, as a crash or a full disk leaves it) and, with `keep`, every line from the
 * first one `keep` refuses (records past the checkpoint being resumed). A line that is not JSON
 * before the end is real corruption and throws `read_failed` with its line. A missing file is fine.
 */
export async function repairJsonl(file: string, keep?: (value: unknown, line: number) => boolean): Promise<JsonlRepair> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return { keptLines: 0, droppedLines: 0, droppedBytes: 0 };
    throw new CoreError('read_failed', `cannot read: ${describeReadError(cause)}`, { file }, { cause });
  }
  let pos = 0;
  let line = 0;
  let kept = 0;
  let cut = -1;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const end = nl < 0 ? buf.length : nl + 1;
    line++;
    const text = buf
      .subarray(pos, nl < 0 ? buf.length : nl)
      .toString('utf8')
      .replace(/^\ufeff/, '');
    const last = end >= buf.length;
    if (text.trim() !== '') {
      let value: unknown;
      let parsed = true;
      try {
        value = JSON.parse(text);
      } catch {
        parsed = false;
      }
      if (!parsed || nl < 0) {
        if (!last) throw new CoreError('read_failed', 'not JSON (the log is corrupt before its last line)', { file, line });
        cut = pos;
        break;
      }
      if (keep !== undefined && !keep(value, line)) {
        cut = pos;
        break;
      }
      kept++;
    }
    pos = end;
  }
  if (cut < 0) return { keptLines: kept, droppedLines: 0, droppedBytes: 0 };
  const dropped = buf.subarray(cut);
  const droppedLines = dropped
    .toString('utf8')
    .split('\n')
    .filter((t) => t.trim() !== '').length;
  try {
    await truncate(file, cut);
    const fh = await open(file, 'r+');
    await fh.sync().finally(() => fh.close());
  } catch (cause) {
    throw new CoreError('write_failed', `cannot cut its torn end: ${describeFsError(cause, file)}`, { file }, { cause });
  }
  return { keptLines: kept, droppedLines, droppedBytes: dropped.length };
}
