import { existsSync, statSync } from 'node:fs';
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

/**
 * A `@rlvr/policy` tokenizer (tiktoken-based) by its own spec. Imported on first use, so that the
 * CLI starts without loading the policy package (and tfjs) unless such a tokenizer is asked for.
 */
async function policyTokenizer(spec: string): Promise<TokenBytes> {
  const [{ loadTokenizer: load, PolicyError }, { policyTokenBytes }] = await Promise.all([import('@rlvr/policy'), import('./policy-token-bytes.js')]);
  try {
    return policyTokenBytes(load(spec), { strict: true });
  } catch (cause) {
    if (cause instanceof PolicyError) throw new RolloutError('invalid_tokenizer', cause.message, { field: 'tokenizer' }, { cause });
    throw cause;
  }
}

/** `tiktoken:NAME`: a built-in tiktoken encoding of `@rlvr/policy` (`gpt2`, `cl100k_base`, `o200k_base`, ...). */
export const tiktokenLoader: TokenizerLoader = {
  name: 'tiktoken',
  usage: 'tiktoken:NAME  a built-in tiktoken encoding (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base)',
  load: (arg) => policyTokenizer(`tiktoken:${arg}`),
};

/** `pruned:PATH`: a `@rlvr/policy` pruned vocabulary (`tokenizer.pruned.json`, or a directory holding one). */
export const prunedLoader: TokenizerLoader = {
  name: 'pruned',
  usage: 'pruned:PATH  a @rlvr/policy pruned vocabulary (tokenizer.pruned.json or its directory)',
  load: (arg) => policyTokenizer(`pruned:${arg}`),
};

/** `model:DIR`: the tokenizer of a `@rlvr/policy` model directory (its `tokenizer.pruned.json`, else its `tokenizer.json`). */
export const modelLoader: TokenizerLoader = {
  name: 'model',
  usage: 'model:DIR  the tokenizer of a model directory (tokenizer.pruned.json, else tokenizer.json)',
  load: async (arg) => {
    if (!existsSync(arg) || !statSync(arg).isDirectory()) throw new RolloutError('invalid_tokenizer', `model:${arg} is not a directory`, { field: 'tokenizer' });
    return policyTokenizer(arg);
  },
};

/** A fresh registry with the loaders this package ships (`vocab`, `hf`, and `@rlvr/policy`'s `tiktoken`, `pruned`, `model`). */
export function defaultTokenizerLoaders(): Registry<TokenizerLoader> {
  const r = new Registry<TokenizerLoader>('tokenizer kind');
  for (const l of [vocabLoader, hfLoader, tiktokenLoader, prunedLoader, modelLoader]) r.register(l);
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
