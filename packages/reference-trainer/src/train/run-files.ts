/**
 * Run-directory I/O of `rlvr train` beyond core's (`createDirectory`, `appendJsonl`): starting its
 * logs, cutting them back on resume, exporting the final model. Every failure names its file.
 */
import { existsSync } from 'node:fs';
import { copyFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describeFsError, repairJsonl } from '@rlvr/core';
import { PRUNED_FILE, saveModel } from '@rlvr/policy';
import type { Qwen3Model } from '@rlvr/policy';
import { ReferenceTrainerError } from '../errors.js';

/** Tokenizer files copied from the starting checkpoint into `OUT/model`. */
const TOKENIZER_FILES = [PRUNED_FILE, 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'generation_config.json'];

/** A fresh run's logs: none yet (a `--resume` without a checkpoint starts over). */
export async function startLogs(files: readonly string[]): Promise<void> {
  for (const file of files) {
    await rm(file, { force: true }).catch((err: unknown) => {
      throw new ReferenceTrainerError('write_failed', `cannot remove: ${describeFsError(err, file)}`, { file }, { cause: err });
    });
  }
}

/**
 * Cut each log back to what the checkpoint of step `step` had written: a torn last line (a
 * crash, a full disk, a hand edit) and every record past `step`. Returns one note per file
 * changed, for the user.
 */
export async function repairLogs(files: readonly string[], step: number): Promise<string[]> {
  const notes: string[] = [];
  for (const file of files) {
    const torn = await repairJsonl(file);
    const after = await repairJsonl(
      file,
      (v) => (v as { step?: unknown }).step === undefined || Number((v as { step: unknown }).step) <= step,
    );
    const parts = [
      ...(torn.droppedLines > 0 ? [`a torn last line (${torn.droppedBytes} bytes)`] : []),
      ...(after.droppedLines > 0 ? [`${after.droppedLines} record${after.droppedLines === 1 ? '' : 's'} after step ${step}`] : []),
    ];
    if (parts.length > 0) notes.push(`${file}: cut ${parts.join(' and ')}; ${after.keptLines} kept`);
  }
  return notes;
}

/** The temporary directory an export of `OUT/NAME` writes to: hidden, per process. */
function exportTemp(dir: string): string {
  return join(dirname(dir), `.${basename(dir)}.tmp-${process.pid}`);
}

/**
 * Remove what an export killed midway left in `outDir` (`.model.tmp-PID`, and the `model.tmp-PID`
 * of earlier versions): one run writes a run directory at a time, so none of them is live.
 */
export async function removeStaleExports(outDir: string, name: string): Promise<void> {
  const entries = await readdir(outDir).catch(() => [] as string[]);
  for (const e of entries) {
    if (e.startsWith(`.${name}.tmp-`) || e.startsWith(`${name}.tmp-`)) await rm(join(outDir, e), { recursive: true, force: true });
  }
}

/**
 * Write the policy as a model directory (weights + the starting checkpoint's tokenizer files) via
 * a hidden temporary directory and a rename; a failure removes it and names the directory.
 */
export async function exportModel(model: Qwen3Model, from: string, dir: string): Promise<void> {
  const tmp = exportTemp(dir);
  try {
    await rm(tmp, { recursive: true, force: true });
    saveModel(model, tmp);
    for (const f of TOKENIZER_FILES) if (existsSync(join(from, f))) await copyFile(join(from, f), join(tmp, f));
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw new ReferenceTrainerError(
      'write_failed',
      `cannot export the final model: ${describeFsError(err, join(dir, 'model.safetensors'))}`,
      { file: dir },
      { cause: err },
    );
  }
}
