import { Tiktoken, get_encoding } from '#tiktoken';
import type { TiktokenEncoding } from '#tiktoken';
import { PolicyError } from '../errors.js';
import { Tokenizer } from './tokenizer.js';
import { BUILTIN_ENCODINGS, baseRanks, type BaseRanks } from './ranks.js';
import type { BuiltinEncoding } from './tokenizer.js';

/** File name of a pruned tokenizer's id remapping, saved next to the checkpoint. */
export const PRUNED_FILE = 'tokenizer.pruned.json';

/**
 * A pruned vocabulary: new id i is the base encoding's token `ids[i]`; special tokens follow the
 * ordinary ones. Enough to rebuild the tokenizer from the built-in base encoding.
 */
export interface PrunedVocab {
  format: 'rlvr-pruned-tiktoken/1';
  base: BuiltinEncoding;
  /** Base ids of the kept ordinary tokens, in base rank order; the index is the new id. */
  ids: number[];
  /** Special tokens and their new ids. */
  special: Record<string, number>;
}

/**
 * Restrict a built-in encoding to the tokens a corpus uses (plus all 256 single bytes, so any text
 * stays encodable, and every intermediate token of their BPE merges, so the corpus encodes to the
 * same tokens as with the full vocabulary). For tiny models whose embedding table must stay small.
 */
export function prunedVocab(baseName: BuiltinEncoding, corpus: Iterable<string>, specialTokens: string[] = ['<|endoftext|>']): PrunedVocab {
  const { rankOf, bytesByRank } = baseRanks(baseName);
  const enc = get_encoding(baseName as TiktokenEncoding);
  const used = new Set<number>();
  try {
    for (const text of corpus) for (const id of enc.encode_ordinary(text)) used.add(id);
  } finally {
    enc.free();
  }
  const keep = new Set<number>();
  for (let b = 0; b < 256; b++) keep.add(rankOf.get(String.fromCharCode(b))!);
  for (const id of used) {
    keep.add(id);
    for (const part of mergePath(bytesByRank[id], rankOf)) keep.add(part);
  }
  const ids = [...keep].sort((a, b) => a - b);
  const special: Record<string, number> = {};
  specialTokens.forEach((s, i) => (special[s] = ids.length + i));
  return { format: 'rlvr-pruned-tiktoken/1', base: baseName, ids, special };
}

/** tiktoken's BPE on one token's bytes (latin1 string), returning the rank of every part created on the way. */
function mergePath(bytes: string, rankOf: Map<string, number>): number[] {
  let parts = Array.from(bytes);
  const created: number[] = [];
  while (parts.length > 1) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < parts.length; i++) {
      const r = rankOf.get(parts[i] + parts[i + 1]);
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) break;
    created.push(bestRank);
    parts = [...parts.slice(0, best), parts[best] + parts[best + 1], ...parts.slice(best + 2)];
  }
  return created;
}

/**
 * Build the tokenizer of a pruned vocabulary: new ids 0..n-1 keep the base ranks' order. `ranks`: the
 * base encoding's (default: read from the `tiktoken` package in Node; a page passes `parseRanks` of the
 * fetched `tiktoken/encoders/BASE.json`).
 */
export function prunedTokenizer(vocab: PrunedVocab, ranks?: BaseRanks): Tokenizer {
  if (vocab.format !== 'rlvr-pruned-tiktoken/1')
    throw new PolicyError('invalid_tokenizer', `unknown pruned vocabulary format ${String(vocab.format)}`);
  const { pattern, bytesByRank } = ranks ?? baseRanks(vocab.base);
  const lines = vocab.ids.map((id, i) => {
    if (bytesByRank[id] === undefined)
      throw new PolicyError('invalid_tokenizer', `pruned vocabulary keeps id ${id}, which ${vocab.base} does not have`);
    return `${btoa(bytesByRank[id])} ${i}`; // the token's bytes (latin1 string) in base64
  });
  const t = new Tiktoken(lines.join('\n'), vocab.special, pattern);
  return new Tokenizer(
    t,
    vocab.special,
    vocab.ids.map((id) => bytesByRank[id]),
    { kind: 'pruned', name: `${vocab.base} pruned to ${vocab.ids.length}` },
  );
}

/** A parsed `tokenizer.pruned.json`, checked (`file` names it in errors). */
export function parsePrunedVocab(value: unknown, file = PRUNED_FILE): PrunedVocab {
  const v = value as PrunedVocab;
  if (v?.format !== 'rlvr-pruned-tiktoken/1')
    throw new PolicyError('invalid_tokenizer', `unknown pruned vocabulary format ${String(v?.format)}`, { file });
  if (!(BUILTIN_ENCODINGS as readonly string[]).includes(v.base))
    throw new PolicyError('invalid_tokenizer', `unknown base encoding ${String(v.base)} (known: ${BUILTIN_ENCODINGS.join(', ')})`, {
      file,
    });
  if (!Array.isArray(v.ids) || typeof v.special !== 'object' || v.special === null)
    throw new PolicyError('invalid_tokenizer', 'pruned vocabulary needs ids[] and special{}', { file });
  return v;
}
