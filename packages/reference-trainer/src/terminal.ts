/**
 * Terminal output of the commands here: core's `StatusLine` on the process's stderr (redrawn in
 * place only where control codes may go: a terminal, `NO_COLOR` unset), and the timestamps in
 * default output names. Only command code uses it: libraries never print.
 */
import { StatusLine as CoreStatusLine, useColor } from '@rlvr/core';

export { timestamp } from '@rlvr/core';

/** `new StatusLine('rlvr train', quiet)`: progress and messages on `process.stderr`. */
export class StatusLine extends CoreStatusLine {
  constructor(prefix: string, quiet: boolean) {
    super(process.stderr, prefix, { live: useColor(process.stderr), quiet });
  }
}
