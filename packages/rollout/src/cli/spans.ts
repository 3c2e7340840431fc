import { z } from 'zod';
import { AtomicWriter, choiceFlag, formatZodIssues, readJsonl, usageError, type Command } from '@rlvr/core';
import { RolloutError } from '../errors.js';
import { spanLocator, type TokenBytes } from '@rlvr/core';
import { loadVocab } from '../spans/vocab.js';
import { writeRows } from './write-rows.js';

const VOCAB_USAGE = 'vocab:FILE.json  a JSON vocabulary: {"encoding": "hex"|"base64"|"utf8", "tokens": [...], "special": [ids]}';

const USAGE = `usage: rlvr-rollout spans --tokenizer SPEC --in FILE.jsonl [--out FILE.jsonl] [--which last|first]

  Reads rows {"completion": [token ids]} and writes one row {"spans": {"open": [s, e],
  "content": [s, e], "close": [s, e]} | null} per input row, in order: the token ranges
  (half-open, relative to the completion) of the answer's \\boxed{...}, found as the grader
  finds it (after the last </think>; null in a think block that never closes or for a
  final box cut off). Without --out, rows go to stdout; with --out, the file is written whole or not at all.
  --in -     reads stdin
  --which    last (default: the box the reward grades) or first (the box the GRAIL reference weights)

Tokenizer SPECs:
  ${VOCAB_USAGE}
  tiktoken:NAME, hf:PATH, pruned:PATH, model:DIR (and kinds registered in @rlvr/policy's tokenizerKinds):
  the tokenizers of @rlvr/policy, loaded only when asked for
`;

const SpansRowSchema = z.object({ completion: z.array(z.number().int().nonnegative()) });

/**
 * The token bytes a `--tokenizer SPEC` names: `vocab:FILE` (a vocabulary file, read here), or any
 * spec of `@rlvr/policy`'s tokenizer registry, imported only then (special tokens have no bytes;
 * an id the tokenizer lacks throws `RolloutError('invalid_tokenizer')`).
 */
export async function tokenBytesFromSpec(spec: string): Promise<TokenBytes> {
  if (spec.startsWith('vocab:')) return loadVocab(spec.slice('vocab:'.length));
  const [{ loadTokenizer }, { policyTokenBytes }] = await Promise.all([
    import('@rlvr/policy/tokenizer'),
    import('../samplers/policy-token-bytes.js'),
  ]);
  try {
    return policyTokenBytes(loadTokenizer(spec), { strict: true });
  } catch (cause) {
    if ((cause as { name?: string }).name === 'PolicyError')
      throw new RolloutError('invalid_tokenizer', (cause as Error).message, { field: '--tokenizer' }, { cause });
    throw cause;
  }
}

/** `rlvr-rollout spans`: answer spans in token space for a JSONL file of completions. */
export const spansCommand: Command = {
  summary: "token ranges of each completion's answer box",
  usage: USAGE,
  options: {
    tokenizer: { type: 'string' },
    in: { type: 'string' },
    out: { type: 'string', short: 'o' },
    which: { type: 'string', default: 'last' },
  },
  async run({ values, io, signal }) {
    const spec = values.tokenizer as string | undefined;
    const file = values.in as string | undefined;
    if (spec === undefined) throw usageError('is required', 'tokenizer');
    if (file === undefined) throw usageError('is required', 'in');
    const locator = spanLocator({ which: choiceFlag(values, 'which', ['last', 'first'] as const) });
    const out = values.out as string | undefined;
    const writer = out === undefined ? undefined : await AtomicWriter.open(out);
    try {
      const vocab = await tokenBytesFromSpec(spec);
      const source = file === '-' ? (io.stdin ?? process.stdin) : file;
      const name = file === '-' ? '<stdin>' : file;
      const rows = (async function* () {
        for await (const { line, value } of readJsonl(source, { name })) {
          const r = SpansRowSchema.safeParse(value);
          if (!r.success) {
            const field = r.error.issues[0]?.path.map(String).join('.') || 'completion';
            throw new RolloutError('invalid_row', formatZodIssues(r.error.issues), { file: name, line, field }, { cause: r.error });
          }
          let spans;
          try {
            spans = locator.fromTokens(r.data.completion, vocab);
          } catch (e) {
            if (e instanceof RolloutError)
              throw new RolloutError(e.code, e.message, { file: name, line, field: 'completion' }, { cause: e });
            throw e;
          }
          yield JSON.stringify({ spans }) + '\n';
        }
      })();
      await writeRows(rows, writer, io, signal);
    } finally {
      await writer?.abort();
    }
  },
};
