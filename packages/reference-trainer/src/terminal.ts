/**
 * Terminal output of the commands here: core's `StatusLine` (redrawn in place only where control
 * codes may go: pass the command's `color`) and `timestamp`, and the Ctrl-C note of a graceful
 * command. Only command code uses it: libraries never print.
 */
export { StatusLine, timestamp } from '@rlvr/core';

/**
 * Run `work` (a graceful command's run), saying on `out` that Ctrl-C stops it after the current
 * step; the status line is closed however `work` ends.
 */
export async function stoppable<T>(
  signal: AbortSignal,
  out: { info(message: string): void; done(): void },
  work: () => Promise<T>,
): Promise<T> {
  const onAbort = (): void => out.info('stopping after this step (Ctrl-C again to exit now)');
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await work();
  } finally {
    signal.removeEventListener('abort', onAbort);
    out.done();
  }
}
