import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { RolloutError } from './errors.js';
import type { Vocab } from './vocab.js';

/**
 * Token bytes from a Hugging Face `tokenizer.json` with a byte-level BPE (GPT-2,
 * Llama 3, Qwen2/2.5/3): the decoding half of the tokenizer, enough to locate answer
 * spans and decode completions. Vocabulary strings spell bytes through GPT-2's
 * `bytes_to_unicode` table; added tokens decode to their content as UTF-8, except
 * special ones, which decode to nothing (as `skip_special_tokens` does).
 */

const HfTokenizerSchema = z.looseObject({
  added_tokens: z
    .array(z.looseObject({ id: z.number().int().nonnegative(), content: z.string(), special: z.boolean() }))
    .default([]),
  decoder: z.looseObject({ type: z.string() }).nullable(),
  model: z.looseObject({ type: z.string(), vocab: z.record(z.string(), z.number().int().nonnegative()) }),
});

/** GPT-2's byte -> code point table, inverted: code point -> byte (-1 where none). */
const UNICODE_TO_BYTE: Int16Array = (() => {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const table = new Int16Array(512).fill(-1);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (printable(b)) table[b] = b;
    else table[256 + extra++] = b;
  }
  return table;
})();

/** Build the token bytes of a parsed byte-level `tokenizer.json`; `source` names it in errors. */
export function vocabFromHfTokenizer(json: unknown, source = 'tokenizer.json'): Vocab {
  const r = HfTokenizerSchema.safeParse(json);
  if (!r.success) throw new RolloutError('invalid_file', `not a tokenizer.json: ${formatZodIssues(r.error.issues)}`, { file: source }, { cause: r.error });
  const { model, decoder, added_tokens } = r.data;
  if (model.type !== 'BPE' || decoder?.type !== 'ByteLevel') {
    throw new RolloutError('invalid_tokenizer', `only byte-level BPE tokenizers are read here (model BPE, decoder ByteLevel); this one has model ${model.type}, decoder ${decoder?.type ?? 'none'}`, { file: source });
  }
  const table = new Map<number, Uint8Array>();
  for (const [piece, id] of Object.entries(model.vocab)) table.set(id, pieceBytes(piece, id, source));
  const encoder = new TextEncoder();
  for (const t of added_tokens) table.set(t.id, t.special ? new Uint8Array(0) : encoder.encode(t.content));
  return {
    size: table.size,
    tokenBytes(id: number): Uint8Array {
      const b = table.get(id);
      if (b === undefined) throw new RolloutError('invalid_tokenizer', `token id ${id} is not in the vocabulary (${table.size} ids)`, { file: source });
      return b;
    },
  };
}

/** Read a byte-level BPE `tokenizer.json` (see `vocabFromHfTokenizer`). */
export async function loadHfTokenizer(file: string): Promise<Vocab> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (cause) {
    throw new RolloutError('invalid_file', `cannot read tokenizer.json: ${(cause as Error).message}`, { file }, { cause });
  }
  return vocabFromHfTokenizer(json, file);
}

function pieceBytes(piece: string, id: number, source: string): Uint8Array {
  const out = new Uint8Array(piece.length);
  let n = 0;
  for (const ch of piece) {
    const cp = ch.codePointAt(0)!;
    const b = cp < UNICODE_TO_BYTE.length ? UNICODE_TO_BYTE[cp]! : -1;
    if (b < 0) throw new RolloutError('invalid_file', `token ${id} (${JSON.stringify(piece)}) has a character outside the byte-level alphabet`, { file: source, field: `model.vocab.${piece}` });
    out[n++] = b;
  }
  return out.subarray(0, n);
}
