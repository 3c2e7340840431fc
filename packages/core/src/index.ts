export * from './browser.js';
export { readConfigFile, readConfigObject, deepMerge } from './config-file.js';
export {
  writeFileAtomic,
  writeFileAtomicSync,
  AtomicWriter,
  assertWritable,
  assertCreatable,
  createDirectory,
  describeFsError,
  removePendingTempFiles,
  tempPathFor,
} from './files.js';
export { drainAndClose } from './http-drain.js';
export type { DrainableServer, DrainWork, DrainResult } from './http-drain.js';
export { readJsonl, parseJsonl, appendJsonl, repairJsonl } from './jsonl.js';
export type { JsonlLine, ReadJsonlOptions, JsonlRepair, TextSource } from './jsonl.js';
export {
  runCommand,
  runCommands,
  cliMain,
  schemaUsageError,
  numberFlag,
  intFlag,
  choiceFlag,
  workersFlag,
  useColor,
} from './cli.js';
export type { Command, CommandContext, CliIo, FlagOption, FlagSpec, FlagValues } from './cli.js';
export { StatusLine, timestamp, stoppable } from './status-line.js';
export { duration, median, progressLine, stepLogger, stopwatch } from './step-progress.js';
export type { StepProgress } from './step-progress.js';
