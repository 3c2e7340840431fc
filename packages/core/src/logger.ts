/**
 * Where library code reports what a caller may want to see. Library code never prints: it takes a
 * `Logger`, and only CLIs pass one that writes to a terminal.
 */
export interface Logger {
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  debug?(message: string, data?: Record<string, unknown>): void;
}

/** A logger that drops everything (the default of every library function that takes one). */
export const silentLogger: Logger = { info: () => undefined, warn: () => undefined, debug: () => undefined };

/**
 * A logger that writes one line per message, `prefix: message`, to a stream (a CLI's stderr).
 * Newlines inside a message are folded, so every entry stays one line.
 */
export function streamLogger(stream: { write(s: string): unknown }, prefix: string, opts: { debug?: boolean } = {}): Logger {
  const line = (level: string, message: string): void => {
    stream.write(`${prefix}: ${level}${message.replace(/\s*\n\s*/g, ' ')}\n`);
  };
  return {
    info: (m) => line('', m),
    warn: (m) => line('warning: ', m),
    debug: (m) => {
      if (opts.debug) line('debug: ', m);
    },
  };
}
