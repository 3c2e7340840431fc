import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { RolloutError } from './errors.js';
import { readJsonl } from './jsonl.js';
import { spanLocator, type SpanOptionsInput } from './spans.js';
import { loadTokenizer } from './tokenizer-spec.js';
import { emitLines, type CommandContext } from './cli-io.js';

export const SPANS_USAGE = `usage: rlvr-rollout spans --tokenizer SPEC --in FILE.jsonl [--out FILE.jsonl] [--which last|first]

  Reads rows {"completion": [token ids]} and writes one row {"spans": {"open": [s, e],
  "content": [s, e], "close": [s, e]} | null} per input row, in order: the token ranges
  (half-open, relative to the completion) of the final \\boxed{...}. Without --out, rows go
  to stdout; with --out, the file is written whole or not at all.
`;

const SpansRowSchema = z.object({ completion: z.array(z.number().int().nonnegative()) });

export async function runSpans({ values, io, loaders }: CommandContext): Promise<void> {
  const locator = spanLocator({ which: values.which as SpanOptionsInput['which'] });
  const vocab = await loadTokenizer(values.tokenizer as string, loaders);
  const file = values.in as string;
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
  await emitLines(rows, values.out as string | undefined, io);
}
