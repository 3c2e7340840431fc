import type { AtomicWriter, CliIo } from '@rlvr/core';

/**
 * Write JSONL rows as they come: to stdout (awaiting backpressure, so memory stays at a few rows),
 * or into `writer`, committed only when every row is written (aborted, leaving nothing, on any
 * error or interruption).
 */
export async function writeRows(
  rows: AsyncIterable<string> | Iterable<string>,
  writer: AtomicWriter | undefined,
  io: CliIo,
  signal: AbortSignal,
): Promise<void> {
  try {
    for await (const text of rows) {
      signal.throwIfAborted();
      if (writer) await writer.write(text);
      else if (io.stdout.write(text) === false) await drained(io.stdout);
    }
    await writer?.commit();
  } catch (e) {
    await writer?.abort();
    throw e;
  }
}

function drained(stream: CliIo['stdout']): Promise<void> {
  const s = stream as { once?(event: string, fn: () => void): unknown };
  return typeof s.once === 'function' ? new Promise((resolve) => s.once!('drain', resolve)) : Promise.resolve();
}
