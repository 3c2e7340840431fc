import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { RolloutError } from '../errors.js';
import type { TokenBytes } from '@rlvr/core';

/**
 * A vocabulary file: each token id's bytes, for tokenizers that are not (yet)
 * loaded in-process. `tokens` is an array indexed by id, or an object keyed by the
 * decimal id; each byte string is written in `encoding`. Ids in `special` decode
 * to nothing (as EOS does when a completion is decoded skipping special tokens).
 *
 * ```json
 * { "encoding": "hex", "tokens": ["5c", "626f786564", "7b", "3134", "7d"], "special": [5] }
 * ```
 */
export const VocabFileSchema = z
  .object({
    encoding: z.enum(['hex', 'base64', 'utf8']).default('hex'),
    tokens: z.union([z.array(z.string()), z.record(z.string(), z.string())]),
    special: z.array(z.number().int().nonnegative()).default([]),
  })
  .strict();
export type VocabFile = z.input<typeof VocabFileSchema>;

/** An in-memory vocabulary: the `TokenBytes` of a vocabulary file. */
export interface Vocab extends TokenBytes {
  /** Number of ids with bytes (special ids included). */
  readonly size: number;
}

const EMPTY = new Uint8Array(0);

/** Build a vocabulary from parsed JSON; `source` names it in errors (a file path). */
export function vocabFromJson(json: unknown, source = 'vocabulary'): Vocab {
  const r = VocabFileSchema.safeParse(json);
  if (!r.success)
    throw new RolloutError(
      'invalid_file',
      `not a vocabulary file: ${formatZodIssues(r.error.issues)}`,
      { file: source },
      { cause: r.error },
    );
  const { encoding, tokens, special } = r.data;
  const table = new Map<number, Uint8Array>();
  const entries: [number, string][] = Array.isArray(tokens)
    ? tokens.map((t, i) => [i, t])
    : Object.entries(tokens).map(([k, v]) => [idKey(k, source), v]);
  for (const [id, text] of entries) table.set(id, decodeBytes(text, encoding, id, source));
  for (const id of special) table.set(id, EMPTY);
  return {
    size: table.size,
    tokenBytes(id: number): Uint8Array {
      const b = table.get(id);
      if (b === undefined)
        throw new RolloutError('invalid_tokenizer', `token id ${id} is not in the vocabulary (${table.size} ids)`, { file: source });
      return b;
    },
  };
}

/** Read a vocabulary file (see `VocabFileSchema`). */
export async function loadVocab(file: string): Promise<Vocab> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new RolloutError('invalid_file', `cannot read vocabulary: ${(cause as Error).message}`, { file }, { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new RolloutError('invalid_file', `vocabulary is not JSON: ${(cause as Error).message}`, { file }, { cause });
  }
  return vocabFromJson(json, file);
}

function idKey(key: string, source: string): number {
  if (!/^(?:0|[1-9]\d*)$/.test(key))
    throw new RolloutError('invalid_file', `token key "${key}" is not a decimal token id`, { file: source, field: `tokens.${key}` });
  return Number(key);
}

function decodeBytes(text: string, encoding: 'hex' | 'base64' | 'utf8', id: number, source: string): Uint8Array {
  if (encoding === 'utf8') return new TextEncoder().encode(text);
  if (encoding === 'hex') {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(text))
      throw new RolloutError('invalid_file', `token ${id}: "${text}" is not hex bytes`, { file: source, field: `tokens.${id}` });
    return new Uint8Array(Buffer.from(text, 'hex'));
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new RolloutError('invalid_file', `token ${id}: "${text}" is not base64`, { file: source, field: `tokens.${id}` });
  }
  return new Uint8Array(Buffer.from(text, 'base64'));
}
