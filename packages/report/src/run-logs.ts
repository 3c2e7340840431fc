/**
 * A run directory's logs as a resumable trainer keeps them (`metrics.jsonl`, `samples.jsonl`,
 * `evals.jsonl`, `checkpoint-weights.jsonl`: records with a `step`): what steps they record,
 * clearing them for a run that recorded none, and cutting them back to a checkpoint's step.
 * Every failure names its file (core's `CoreError`).
 */
import { rm } from 'node:fs/promises';
import { CoreError, describeFsError, readJsonl, repairJsonl } from '@rlvr/core';

/** A log that records training steps: its path and the highest step it holds (past 0, the starting checkpoint's evaluation). */
export interface RecordedSteps {
  file: string;
  lastStep: number;
}

/**
 * The logs among `files` that record a training step (a record with `step` above 0), with the highest
 * one: what a trainer must not erase by starting over. A missing file, a torn or unreadable line is passed over.
 */
export async function recordedSteps(files: readonly string[]): Promise<RecordedSteps[]> {
  const found: RecordedSteps[] = [];
  for (const file of files) {
    let last = 0;
    try {
      for await (const { value } of readJsonl(file, { invalidLines: 'yield' })) {
        const step = Number((value as { step?: unknown } | undefined)?.step);
        if (step > last) last = step;
      }
    } catch {
      // a missing file records nothing; an unreadable one is reported when it is read for real
    }
    if (last > 0) found.push({ file, lastStep: last });
  }
  return found;
}

/** Remove the logs `files` (a run starting over that recorded no step). */
export async function clearRunLogs(files: readonly string[]): Promise<void> {
  for (const file of files) {
    await rm(file, { force: true }).catch((err: unknown) => {
      throw new CoreError('write_failed', `cannot remove: ${describeFsError(err, file)}`, { file }, { cause: err });
    });
  }
}

/**
 * Cut each log back to what the checkpoint of step `step` had written: a torn last line (a
 * crash, a full disk, a hand edit) and every record past `step`. Returns one note per file
 * changed, for the user.
 */
export async function repairRunLogs(files: readonly string[], step: number): Promise<string[]> {
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
