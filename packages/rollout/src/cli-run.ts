import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CoreError, formatZodIssues, type Registry } from '@rlvr/core';
import { RolloutError } from './errors.js';
import { readJsonl, writeFileAtomic } from './jsonl.js';
import { spanLocator } from './spans.js';
import { defaultTokenizerLoaders, loadTokenizer, type TokenizerLoader } from './tokenizer-spec.js';

/** Where the CLI writes: process streams in the bin, buffers in tests. */
export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

const USAGE = `usage: rlvr-rollout spans --tokenizer SPEC --in FILE.jsonl [--out FILE.jsonl] [--which last|first]

Reads rows {"completion": [token ids]} and writes one row {"spans": {"open": [s, e],
"content": [s, e], "close": [s, e]} | null} per input row, in order: the token ranges
(half-open, relative to the completion) of the final \\boxed{...}. Without --out, rows go
to stdout; with --out, the file is written whole or not at all.
`;

const SpansRowSchema = z.object({ completion: z.array(z.number().int().nonnegative()) });

/**
 * The `rlvr-rollout` command line. Returns the exit code: 0 done, 1 bad input
 * (message on stderr, naming file, line and field), 2 bad usage. `loaders` lets a
 * caller add tokenizer kinds (`@rlvr/policy`'s) to `--tokenizer`.
 */
export async function runCli(argv: readonly string[], io: CliIo, loaders: Registry<TokenizerLoader> = defaultTokenizerLoaders()): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    io.stdout.write(USAGE + tokenizerHelp(loaders));
    return command === undefined ? 2 : 0;
  }
  if (command !== 'spans') {
    io.stderr.write(`rlvr-rollout: unknown command "${command}"; known: spans\n${USAGE}`);
    return 2;
  }
  let values: { tokenizer?: string; in?: string; out?: string; which?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...rest],
      options: {
        tokenizer: { type: 'string' },
        in: { type: 'string' },
        out: { type: 'string' },
        which: { type: 'string', default: 'last' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    io.stderr.write(`rlvr-rollout spans: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(USAGE + tokenizerHelp(loaders));
    return 0;
  }
  if (values.tokenizer === undefined || values.in === undefined) {
    io.stderr.write(`rlvr-rollout spans: --tokenizer and --in are required\n${USAGE}`);
    return 2;
  }
  try {
    const locator = spanLocator({ which: values.which as 'last' | 'first' });
    const vocab = await loadTokenizer(values.tokenizer, loaders);
    const file = values.in;
    const rows = (async function* () {
      for await (const { line, value } of readJsonl(file)) {
        const r = SpansRowSchema.safeParse(value);
        if (!r.success) {
          const field = r.error.issues[0]?.path.map(String).join('.') || 'completion';
          throw new RolloutError('invalid_row', formatZodIssues(r.error.issues), { file, line, field }, { cause: r.error });
        }
        let spans;
        try {
          spans = locator.fromTokens(r.data.completion, vocab);
        } catch (e) {
          if (e instanceof RolloutError) throw new RolloutError(e.code, e.message, { file, line, field: 'completion' }, { cause: e });
          throw e;
        }
        yield JSON.stringify({ spans }) + '\n';
      }
    })();
    if (values.out === undefined) {
      for await (const text of rows) io.stdout.write(text);
    } else {
      // spans rows are small: gather them, then write the file whole or not at all
      const all: string[] = [];
      for await (const text of rows) all.push(text);
      await writeFileAtomic(values.out, all.join(''));
    }
    return 0;
  } catch (e) {
    if (e instanceof RolloutError || e instanceof CoreError) {
      io.stderr.write(`rlvr-rollout spans: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

function tokenizerHelp(loaders: Registry<TokenizerLoader>): string {
  return `\nTokenizer SPECs:\n${loaders.names().map((n) => `  ${loaders.get(n).usage}`).join('\n')}\n`;
}
