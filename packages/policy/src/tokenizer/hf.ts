import { readFileSync } from 'node:fs';
import { Tiktoken } from 'tiktoken';
import { PolicyError } from '../errors.js';
import { Tokenizer } from './tokenizer.js';

/** GPT-2's byte <-> printable-unicode table that byte-level BPE vocabularies are written in. */
function unicodeToBytes(): Map<string, number> {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  return new Map(bs.map((b, i) => [String.fromCodePoint(cs[i]), b]));
}

interface HfTokenizerJson {
  normalizer?: { type?: string } | null;
  pre_tokenizer?: unknown;
  model?: { type?: string; vocab?: Record<string, number>; merges?: (string | [string, string])[]; byte_fallback?: boolean };
  added_tokens?: { id: number; content: string; special?: boolean }[];
}

/** The pieces tiktoken needs: ranks in tiktoken's text format, special tokens, split regex. */
export interface TiktokenParts {
  ranks: string;
  /** Each token's bytes as a latin1 string, by id. */
  bytesByRank: string[];
  special: Record<string, number>;
  /** Added tokens marked `"special": false` (Qwen3's `<think>`): decoded text keeps them. */
  textTokens: number[];
  pattern: string;
  nfc: boolean;
}

/**
 * Convert a Hugging Face `tokenizer.json` byte-level BPE (GPT-2 / Qwen style) to tiktoken ranks.
 * Tiktoken merges the adjacent pair whose concatenation has the lowest rank, so ranks are the
 * vocabulary ids; this equals Hugging Face's merge-priority BPE when merge order and id order agree,
 * which we check (merge i must create a token with a larger id than merge i-1's).
 */
export function hfToTiktoken(json: HfTokenizerJson, file = 'tokenizer.json'): TiktokenParts {
  const model = json.model;
  if (model?.type !== 'BPE' || !model.vocab || !model.merges) {
    throw new PolicyError('invalid_tokenizer', 'not a BPE tokenizer.json (model.type must be "BPE" with vocab and merges)', { file });
  }
  if (model.byte_fallback)
    throw new PolicyError('invalid_tokenizer', 'byte_fallback (SentencePiece-style) BPE is not byte-level; unsupported', { file });
  const pattern = findSplitRegex(json.pre_tokenizer);
  if (!pattern) throw new PolicyError('invalid_tokenizer', 'pre_tokenizer has no Split regex + ByteLevel; unsupported', { file });
  const u2b = unicodeToBytes();
  const lines: string[] = [];
  const bytesByRank: string[] = [];
  for (const [tok, id] of Object.entries(model.vocab)) {
    const bytes: number[] = [];
    for (const ch of tok) {
      const b = u2b.get(ch);
      if (b === undefined)
        throw new PolicyError('invalid_tokenizer', `vocabulary token ${JSON.stringify(tok)} (id ${id}) is not byte-level encoded`, {
          file,
        });
      bytes.push(b);
    }
    lines.push(`${Buffer.from(bytes).toString('base64')} ${id}`);
    bytesByRank[id] = Buffer.from(bytes).toString('latin1');
  }
  let last = -1;
  for (let i = 0; i < model.merges.length; i++) {
    const m = model.merges[i];
    const [a, b] = typeof m === 'string' ? m.split(' ') : m;
    const id = model.vocab[a + b];
    if (id === undefined)
      throw new PolicyError('invalid_tokenizer', `merge ${i} (${a} ${b}) creates a token missing from the vocabulary`, { file });
    if (id <= last)
      throw new PolicyError(
        'invalid_tokenizer',
        `merge ${i} creates id ${id} after id ${last}: merge order differs from id order, which tiktoken ranks cannot express`,
        { file },
      );
    last = id;
  }
  const special: Record<string, number> = {};
  const textTokens: number[] = [];
  for (const t of json.added_tokens ?? []) {
    special[t.content] = t.id;
    if (t.special === false) textTokens.push(t.id);
  }
  return { ranks: lines.join('\n'), bytesByRank, special, textTokens, pattern, nfc: json.normalizer?.type === 'NFC' };
}

function findSplitRegex(pre: unknown): string | null {
  const p = pre as { type?: string; pretokenizers?: unknown[]; pattern?: { Regex?: string } } | null;
  if (!p) return null;
  if (p.type === 'Sequence') {
    for (const q of p.pretokenizers ?? []) {
      const r = findSplitRegex(q);
      if (r) return r;
    }
    return null;
  }
  if (p.type === 'Split' && p.pattern?.Regex) return p.pattern.Regex;
  return null;
}

/** Load a Hugging Face `tokenizer.json` (byte-level BPE) as a tiktoken `Tokenizer`. */
export function loadHfTokenizer(file: string): Tokenizer {
  let json: HfTokenizerJson;
  try {
    json = JSON.parse(readFileSync(file, 'utf8')) as HfTokenizerJson;
  } catch (cause) {
    throw new PolicyError('invalid_tokenizer', `cannot read tokenizer.json: ${(cause as Error).message}`, { file }, { cause });
  }
  const parts = hfToTiktoken(json, file);
  let enc: Tiktoken;
  try {
    enc = new Tiktoken(parts.ranks, parts.special, parts.pattern);
  } catch (cause) {
    throw new PolicyError('invalid_tokenizer', `tiktoken rejected the converted vocabulary: ${String(cause)}`, { file }, { cause });
  }
  return new Tokenizer(enc, parts.special, parts.bytesByRank, { kind: 'hf', name: file }, { nfc: parts.nfc, textTokens: parts.textTokens });
}
