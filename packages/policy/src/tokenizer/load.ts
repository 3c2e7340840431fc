import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PolicyError } from '../errors.js';
import { loadHfTokenizer } from './hf.js';
import { PRUNED_FILE, loadPrunedVocab, prunedTokenizer } from './pruned.js';
import { BUILTIN_ENCODINGS, Tokenizer } from './tokenizer.js';
import type { BuiltinEncoding } from './tokenizer.js';

/**
 * Load a tokenizer from a spec string:
 * - `tiktoken:cl100k_base` (any built-in encoding);
 * - `hf:PATH` a Hugging Face `tokenizer.json` (or a directory holding one);
 * - `pruned:PATH` a `tokenizer.pruned.json` (or a directory holding one);
 * - a bare directory (e.g. a model directory): `tokenizer.pruned.json` if present, else `tokenizer.json`.
 */
export function loadTokenizer(spec: string): Tokenizer {
  const colon = spec.indexOf(':');
  const kind = colon > 0 ? spec.slice(0, colon) : '';
  const arg = colon > 0 ? spec.slice(colon + 1) : spec;
  if (kind === 'tiktoken') {
    if (!(BUILTIN_ENCODINGS as readonly string[]).includes(arg)) throw new PolicyError('invalid_tokenizer', `unknown tiktoken encoding ${arg} (known: ${BUILTIN_ENCODINGS.join(', ')})`);
    return Tokenizer.builtin(arg as BuiltinEncoding);
  }
  if (kind === 'hf') return loadHfTokenizer(isDir(arg) ? join(arg, 'tokenizer.json') : arg);
  if (kind === 'pruned') return prunedTokenizer(loadPrunedVocab(isDir(arg) ? join(arg, PRUNED_FILE) : arg));
  if (kind !== '') throw new PolicyError('invalid_tokenizer', `unknown tokenizer kind ${kind} in ${spec} (known: tiktoken:, hf:, pruned:, or a directory)`);
  if (isDir(arg)) {
    if (existsSync(join(arg, PRUNED_FILE))) return prunedTokenizer(loadPrunedVocab(join(arg, PRUNED_FILE)));
    if (existsSync(join(arg, 'tokenizer.json'))) return loadHfTokenizer(join(arg, 'tokenizer.json'));
    throw new PolicyError('invalid_tokenizer', `no ${PRUNED_FILE} or tokenizer.json in the directory`, { file: arg });
  }
  throw new PolicyError('invalid_tokenizer', `cannot interpret tokenizer spec ${spec} (use tiktoken:NAME, hf:PATH, pruned:PATH or a directory)`);
}

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}
