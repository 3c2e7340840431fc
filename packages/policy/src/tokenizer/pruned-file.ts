import { readFileSync } from 'node:fs';
import { writeFileAtomicSync } from '@rlvr/core';
import { PolicyError } from '../errors.js';
import { parsePrunedVocab, type PrunedVocab } from './pruned.js';

/** Write `tokenizer.pruned.json` atomically. */
export function savePrunedVocab(file: string, vocab: PrunedVocab): void {
  writeFileAtomicSync(file, [JSON.stringify(vocab) + '\n']);
}

export function loadPrunedVocab(file: string): PrunedVocab {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new PolicyError('invalid_tokenizer', `cannot read pruned vocabulary: ${(cause as Error).message}`, { file }, { cause });
  }
  return parsePrunedVocab(v, file);
}
