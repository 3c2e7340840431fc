/**
 * Terminal output shared by the commands: messages on stderr under a live status line (on a
 * terminal, redrawn in place; elsewhere printed as ordinary lines when the caller asks), and
 * the timestamps in default output names. Only command code uses it: libraries never print.
 */
export class StatusLine {
  readonly tty = process.stderr.isTTY === true;
  #bar = '';

  /** `prefix`: e.g. `rlvr train`; `quiet`: print nothing. */
  constructor(
    readonly prefix: string,
    readonly quiet: boolean,
  ) {}

  /** A message on its own line, newlines folded; the status line is redrawn below it. */
  line(message: string): void {
    if (this.quiet) return;
    this.#clear();
    process.stderr.write(`${this.prefix}: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    if (this.#bar !== '') process.stderr.write(this.#bar);
  }

  /** Replace the status line on a terminal (empty text removes it); elsewhere print it as a line when `log`. */
  status(text: string, log: boolean): void {
    if (this.quiet) return;
    if (this.tty) {
      this.#clear();
      this.#bar = text === '' ? '' : `${this.prefix}: ${text}`;
      process.stderr.write(this.#bar);
    } else if (log) {
      process.stderr.write(`${this.prefix}: ${text}\n`);
    }
  }

  /** Leave the status line where it is and move below it. */
  done(): void {
    if (this.tty && this.#bar !== '') process.stderr.write('\n');
    this.#bar = '';
  }

  #clear(): void {
    if (this.#bar !== '') process.stderr.write('\r\x1b[2K');
  }
}

/** `20261203-061500` (UTC): the time part of default output names. */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}
