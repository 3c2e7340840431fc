/**
 * Progress on a command's stderr: messages as lines, and a status line that is redrawn in place
 * on a terminal (`live`) and otherwise printed as an ordinary line when the caller asks (a log
 * file gets every tenth of the work, not a redraw per item). Only command code uses it.
 */
export class StatusLine {
  #bar = '';

  /**
   * @param stream where to write (a command's `io.stderr`)
   * @param prefix e.g. `rlvr eval`
   * @param opts.live redraw in place with `\r` and an erase-line code: pass the command's `color`
   *   (a terminal, `NO_COLOR` unset), so a pipe or a file never gets control codes
   * @param opts.quiet print nothing
   */
  constructor(
    readonly stream: { write(s: string): unknown },
    readonly prefix: string,
    readonly opts: { live: boolean; quiet?: boolean },
  ) {}

  /** A message on its own line, newlines folded; the status line is redrawn below it. */
  line(message: string): void {
    if (this.opts.quiet) return;
    this.#clear();
    this.stream.write(`${this.prefix}: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    if (this.#bar !== '') this.stream.write(this.#bar);
  }

  /** Replace the status line when live (empty text removes it); otherwise print it as a line when `log`. */
  status(text: string, log: boolean): void {
    if (this.opts.quiet) return;
    if (this.opts.live) {
      this.#clear();
      this.#bar = text === '' ? '' : `${this.prefix}: ${text}`;
      this.stream.write(this.#bar);
    } else if (log) {
      this.stream.write(`${this.prefix}: ${text}\n`);
    }
  }

  /** Leave the status line where it is and move below it. */
  done(): void {
    if (this.opts.live && this.#bar !== '') this.stream.write('\n');
    this.#bar = '';
  }

  #clear(): void {
    if (this.#bar !== '') this.stream.write('\r\x1b[2K');
  }
}

/** `20261203-061500` (UTC): the time part of default output names, so a repeated command never overwrites. */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** What a graceful command says when a signal asks it to stop: Ctrl-C is SIGINT's name on a terminal; any other signal is named. */
function stoppingLine(reason: unknown): string {
  const sig = /\bSIG[A-Z]+\b/.exec(reason instanceof Error ? reason.message : '')?.[0];
  return sig === undefined || sig === 'SIGINT'
    ? 'stopping after this step (Ctrl-C again to exit now)'
    : `${sig}: stopping after this step (a second ${sig} or Ctrl-C exits now)`;
}

/**
 * Run `work` (a graceful command's run, `Command.graceful`), saying on `out` (its `StatusLine`
 * logger) that Ctrl-C stops it after the current step; the status line is closed however `work` ends.
 * With `idle: true`, a signal while no step is in flight (`work` marks its steps with `inStep`:
 * start-up, the first evaluation, between steps) rejects at once with an AbortError (exit 130);
 * one during a step lets the step finish.
 */
export async function stoppable<T>(
  signal: AbortSignal,
  out: { info(message: string): void; done(): void },
  work: (inStep: (inFlight: boolean) => void) => Promise<T>,
  options: { idle?: boolean } = {},
): Promise<T> {
  let stepping = options.idle !== true;
  let stopNow: (err: Error) => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    stopNow = reject;
  });
  const abortError = (): Error => new DOMException('interrupted', 'AbortError');
  // once: `work` may abort synchronously, before the `signal.aborted` check below sees it
  let noticed = false;
  const onAbort = (): void => {
    if (noticed) return;
    noticed = true;
    if (stepping) out.info(stoppingLine(signal.reason));
    else stopNow(abortError());
  };
  const inStep = (inFlight: boolean): void => {
    stepping = inFlight || options.idle !== true;
    if (!stepping && signal.aborted) stopNow(abortError());
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const running = work(inStep);
    // what `work` does after an abort stopped waiting for it is no one's concern: the process exits
    running.catch(() => undefined);
    if (signal.aborted) onAbort();
    return await Promise.race([running, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    out.done();
  }
}
