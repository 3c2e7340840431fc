import { Registry } from '@rlvr/core';
import { RolloutError } from './errors.js';
import type { TokenBytes } from './spans.js';
import { loadVocab } from './vocab.js';
import { loadHfTokenizer } from './hf-tokenizer.js';

/**
 * One kind of tokenizer a `KIND:ARG` spec can name (`vocab:FILE.json`). This is the
 * extension point for `@rlvr/policy`'s tokenizers: register a loader for their kind
 * and every CLI that takes `--tokenizer SPEC` understands it.
 */
export interface TokenizerLoader {
  readonly name: string;
  /** One line for `--help`: what ARG is. */
  readonly usage: string;
  load(arg: string): Promise<TokenBytes>;
}

/** `vocab:FILE.json`: a vocabulary file of token bytes (see `VocabFileSchema`). */
export const vocabLoader: TokenizerLoader = {
  name: 'vocab',
  usage: 'vocab:FILE.json  a JSON vocabulary: {"encoding": "hex"|"base64"|"utf8", "tokens": [...], "special": [ids]}',
  load: (arg) => loadVocab(arg),
};

/** `hf:tokenizer.json`: a Hugging Face byte-level BPE tokenizer (Qwen2/2.5/3, Llama 3, GPT-2). */
export const hfLoader: TokenizerLoader = {
  name: 'hf',
  usage: 'hf:tokenizer.json  a Hugging Face byte-level BPE tokenizer file (Qwen2/2.5/3, Llama 3, GPT-2)',
  load: (arg) => loadHfTokenizer(arg),
};

/** A fresh registry with the loaders this package ships (`vocab`, `hf`). */
export function defaultTokenizerLoaders(): Registry<TokenizerLoader> {
  const r = new Registry<TokenizerLoader>('tokenizer kind');
  r.register(vocabLoader);
  r.register(hfLoader);
  return r;
}

/**
 * Load the tokenizer a `KIND:ARG` spec names. An unknown kind or a spec without
 * a kind throws `RolloutError('invalid_tokenizer')` listing the known kinds.
 */
export async function loadTokenizer(spec: string, loaders: Registry<TokenizerLoader> = defaultTokenizerLoaders()): Promise<TokenBytes> {
  const colon = spec.indexOf(':');
  const kind = colon > 0 ? spec.slice(0, colon) : '';
  if (kind === '' || !loaders.has(kind)) {
    const known = loaders.names().map((n) => `${n}:...`).join(', ');
    const what = kind === '' ? `tokenizer spec "${spec}" has no KIND: prefix` : `unknown tokenizer kind "${kind}"`;
    throw new RolloutError('invalid_tokenizer', `${what}; known: ${known}`, { field: 'tokenizer' });
  }
  return loaders.get(kind).load(spec.slice(colon + 1));
}
