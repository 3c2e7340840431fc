import { PolicyError } from '../errors.js';
import { nodeBuiltin } from '../node-builtin.js';

/** Built-in tiktoken encodings (shipped inside the `tiktoken` package; no download). */
export const BUILTIN_ENCODINGS = ['gpt2', 'r50k_base', 'p50k_base', 'cl100k_base', 'o200k_base'] as const;
export type BuiltinEncoding = (typeof BUILTIN_ENCODINGS)[number];

export interface BaseRanks {
  pattern: string;
  /** Token bytes (latin1 string: one char per byte) by rank. */
  bytesByRank: string[];
  rankOf: Map<string, number>;
}

/**
 * The ranks of a built-in encoding, parsed from the encoder json that ships in the `tiktoken`
 * package (`! OFFSET tok tok ...`, base64 tokens in rank order). Parsed in JS rather than queried
 * through the wasm encoder, whose lookups of absent tokens throw and poison the encoder.
 * Node only (it reads the package's file); a page fetches the file and calls `parseRanks`.
 */
export function baseRanks(name: BuiltinEncoding): BaseRanks {
  if (!(BUILTIN_ENCODINGS as readonly string[]).includes(name))
    throw new PolicyError('invalid_tokenizer', `unknown base encoding ${name} (known: ${BUILTIN_ENCODINGS.join(', ')})`);
  const instead = `in a browser, fetch tiktoken/encoders/${name}.json and pass parseRanks(json)`;
  const file = nodeBuiltin('node:module', 'invalid_tokenizer', instead)
    .createRequire(import.meta.url)
    .resolve(`tiktoken/encoders/${name}.json`);
  return parseRanks(JSON.parse(nodeBuiltin('node:fs', 'invalid_tokenizer', instead).readFileSync(file, 'utf8')));
}

/** The ranks of an encoder json of the `tiktoken` package (`{ pat_str, bpe_ranks }`), already parsed. */
export function parseRanks(json: { pat_str: string; bpe_ranks: string }): BaseRanks {
  if (typeof json?.pat_str !== 'string' || typeof json.bpe_ranks !== 'string')
    throw new PolicyError('invalid_tokenizer', 'an encoder json needs the strings pat_str and bpe_ranks (tiktoken/encoders/NAME.json)');
  const bytesByRank: string[] = [];
  const rankOf = new Map<string, number>();
  const fields = json.bpe_ranks.split(/\s+/);
  let rank = 0;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f === '') continue;
    if (f === '!') {
      rank = Number(fields[++i]);
      continue;
    }
    const b = atob(f); // one char per byte (latin1), as Buffer's 'latin1' gave
    bytesByRank[rank] = b;
    rankOf.set(b, rank++);
  }
  return { pattern: json.pat_str, bytesByRank, rankOf };
}
