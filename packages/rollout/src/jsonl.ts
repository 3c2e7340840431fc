import { createReadStream } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { RolloutError } from './errors.js';

/** One parsed JSONL line with its 1-based line number. */
export interface JsonlLine {
  line: number;
  value: unknown;
}

/**
 * Stream a JSONL file line by line (memory stays at one line). Blank lines are
 * skipped; a line that is not JSON throws `RolloutError('invalid_file')` naming the
 * file and line. A file that cannot be opened throws the same code.
 */
export async function* readJsonl(file: string): AsyncGenerator<JsonlLine> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  try {
    await opened;
  } catch (cause) {
    throw new RolloutError('invalid_file', `cannot read: ${(cause as Error).message}`, { file }, { cause });
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (cause) {
        throw new RolloutError('invalid_file', `not JSON: ${(cause as Error).message}`, { file, line }, { cause });
      }
      yield { line, value };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** Write a file whole or not at all: to a temporary name beside it, then rename. */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, data);
  await rename(tmp, file);
}
