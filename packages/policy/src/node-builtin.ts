import type * as Fs from 'node:fs';
import type * as Module from 'node:module';
import { PolicyError } from './errors.js';

interface Builtins {
  'node:fs': typeof Fs;
  'node:module': typeof Module;
}

/**
 * A Node built-in module, loaded when called (`process.getBuiltinModule`, Node >= 20.16) rather than
 * imported: the modules that use it (the tokenizer's ranks, chat templates) also run in a browser,
 * where only their readers of files are missing. There it throws `PolicyError(code)` saying what
 * needs Node and what a page does instead (`instead`).
 */
export function nodeBuiltin<K extends keyof Builtins>(id: K, code: 'invalid_tokenizer', instead: string): Builtins[K] {
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  if (typeof get !== 'function') throw new PolicyError(code, `reading files needs Node (${id}); ${instead}`);
  return get(id) as Builtins[K];
}
