/**
 * Run-directory I/O of `rlvr train` beyond core's (`createDirectory`, `appendJsonl`): starting its
 * logs and cutting them back on resume. Every failure names its file.
 */
import { rm } from 'node:fs/promises';
import { describeFsError, repairJsonl } from '@rlvr/core';
import { ReferenceTrainerError } from '../errors.js';

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
