/** Plain-text output shared by the command tables and summaries: core's, re-exported for the files here that import it. */
export { percent, textTable } from '@rlvr/core';
