import type { Registry } from '@rlvr/core';
import { writeFileAtomic } from './jsonl.js';
import type { TokenizerLoader } from './tokenizer-spec.js';

/** Where the CLI writes: process streams in the bin, buffers in tests. */
export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** What a subcommand gets: its parsed flags, where to write, and the tokenizer kinds. */
export interface CommandContext {
  values: Record<string, string | boolean | undefined>;
  io: CliIo;
  loaders: Registry<TokenizerLoader>;
}

/** Write JSONL rows to stdout as they come, or gather them and write `out` whole (temp file, then rename). */
export async function emitLines(rows: AsyncIterable<string> | Iterable<string>, out: string | undefined, io: CliIo): Promise<void> {
  if (out === undefined) {
    for await (const text of rows) io.stdout.write(text);
    return;
  }
  const all: string[] = [];
  for await (const text of rows) all.push(text);
  await writeFileAtomic(out, all.join(''));
}
