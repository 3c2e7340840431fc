import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from '@rlvr/core';
import { PolicyError } from '../errors.js';
import { loadHfTokenizer } from './hf.js';
import { PRUNED_FILE, prunedTokenizer } from './pruned.js';
import { loadPrunedVocab } from './pruned-file.js';
import { BUILTIN_ENCODINGS, Tokenizer } from './tokenizer.js';
import type { BuiltinEncoding } from './tokenizer.js';

/** One kind of tokenizer a `KIND:ARG` spec names (`hf:tokenizer.json`). Register more in `tokenizerKinds`. */
export interface TokenizerKind {
  readonly name: string;
  /** One line for a CLI's help: what ARG is. */
  readonly usage: string;
  load(arg: string): Tokenizer;
}

const isDir = (p: string): boolean => existsSync(p) && statSync(p).isDirectory();

/** The tokenizer of a model directory: its `tokenizer.pruned.json`, else its `tokenizer.json`. */
function fromModelDir(dir: string): Tokenizer {
  if (!isDir(dir)) throw new PolicyError('invalid_tokenizer', 'not a directory', { file: dir });
  if (existsSync(join(dir, PRUNED_FILE))) return prunedTokenizer(loadPrunedVocab(join(dir, PRUNED_FILE)));
  if (existsSync(join(dir, 'tokenizer.json'))) return loadHfTokenizer(join(dir, 'tokenizer.json'));
  throw new PolicyError('invalid_tokenizer', `no ${PRUNED_FILE} or tokenizer.json in the directory`, { file: dir });
}

/**
 * The one registry of tokenizer kinds in rlvr: every `--tokenizer SPEC` and `loadTokenizer(spec)`
 * resolves here. Built in: `tiktoken`, `hf`, `pruned`, `model`.
 */
export const tokenizerKinds = new Registry<TokenizerKind>('tokenizer kind');

tokenizerKinds.register({
  name: 'tiktoken',
  usage: `tiktoken:NAME    a built-in tiktoken encoding (${BUILTIN_ENCODINGS.join(', ')})`,
  load: (arg) => {
    if (!(BUILTIN_ENCODINGS as readonly string[]).includes(arg))
      throw new PolicyError('invalid_tokenizer', `unknown tiktoken encoding ${arg} (known: ${BUILTIN_ENCODINGS.join(', ')})`);
    return Tokenizer.builtin(arg as BuiltinEncoding);
  },
});
tokenizerKinds.register({
  name: 'hf',
  usage: 'hf:PATH         a Hugging Face byte-level BPE tokenizer.json, or its directory (Qwen2/2.5/3, Llama 3, GPT-2)',
  load: (arg) => loadHfTokenizer(isDir(arg) ? join(arg, 'tokenizer.json') : arg),
});
tokenizerKinds.register({
  name: 'pruned',
  usage: `pruned:PATH     a pruned vocabulary (${PRUNED_FILE}), or its directory`,
  load: (arg) => prunedTokenizer(loadPrunedVocab(isDir(arg) ? join(arg, PRUNED_FILE) : arg)),
});
tokenizerKinds.register({
  name: 'model',
  usage: `model:DIR       the tokenizer of a model directory (${PRUNED_FILE}, else tokenizer.json); a bare DIR says the same`,
  load: fromModelDir,
});

/**
 * Load a tokenizer from a spec: `KIND:ARG` for a kind in `tokenizerKinds` (`tiktoken:cl100k_base`,
 * `hf:PATH`, `pruned:PATH`, `model:DIR`), or a bare directory (a model directory's tokenizer).
 * An unknown kind throws `PolicyError('invalid_tokenizer')` listing the known ones.
 */
export function loadTokenizer(spec: string): Tokenizer {
  const colon = spec.indexOf(':');
  const kind = colon > 0 ? spec.slice(0, colon) : '';
  if (kind !== '' && tokenizerKinds.has(kind)) return tokenizerKinds.get(kind).load(spec.slice(colon + 1));
  if (isDir(spec)) return fromModelDir(spec);
  const known = tokenizerKinds
    .names()
    .map((n) => `${n}:`)
    .join(', ');
  if (kind !== '')
    throw new PolicyError('invalid_tokenizer', `unknown tokenizer kind "${kind}" in ${spec} (known: ${known} or a model directory)`);
  throw new PolicyError(
    'invalid_tokenizer',
    `cannot interpret tokenizer spec ${spec} (use ${known.replace(/:/g, ':...')} or a model directory)`,
  );
}
