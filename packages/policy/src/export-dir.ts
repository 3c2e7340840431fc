/**
 * Exporting a policy as a model directory in one piece: weights, config and the tokenizer files of
 * the directory it came from, written to a hidden temporary directory and renamed into place.
 */
import { existsSync } from 'node:fs';
import { copyFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describeFsError } from '@rlvr/core';
import { saveModel } from './checkpoint.js';
import { PolicyError } from './errors.js';
import type { Qwen3Model } from './model.js';
import { TOKENIZER_CONFIG_FILE } from './model-dir.js';
import { PRUNED_FILE } from './tokenizer/index.js';

/** The tokenizer files a model directory may hold (copied when the source directory has them). */
const TOKENIZER_FILES = [PRUNED_FILE, 'tokenizer.json', TOKENIZER_CONFIG_FILE, 'special_tokens_map.json', 'generation_config.json'];

/**
 * Write `model` as the model directory `dir` with the tokenizer files of `tokenizerFrom`, through
 * `.NAME.tmp-PID` beside it and a rename, so `dir` is the old export or the new one, never half of
 * one. Temporary directories an earlier export left when killed (`.NAME.tmp-*`, and `NAME.tmp-*` of
 * earlier versions) are removed first. A failure removes the temporary directory and is
 * `PolicyError('write_failed')` naming the file.
 */
export async function exportModelDir(model: Qwen3Model, dir: string, tokenizerFrom: string): Promise<void> {
  const parent = dirname(dir);
  const name = basename(dir);
  for (const e of await readdir(parent).catch(() => [] as string[]))
    if (e.startsWith(`.${name}.tmp-`) || e.startsWith(`${name}.tmp-`)) await rm(join(parent, e), { recursive: true, force: true });
  const tmp = join(parent, `.${name}.tmp-${process.pid}`);
  try {
    await saveModel(model, tmp);
    for (const f of TOKENIZER_FILES) if (existsSync(join(tokenizerFrom, f))) await copyFile(join(tokenizerFrom, f), join(tmp, f));
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    const why = describeFsError(err, join(dir, 'model.safetensors'));
    throw new PolicyError('write_failed', `cannot export the model: ${why}`, { file: dir }, { cause: err });
  }
}
