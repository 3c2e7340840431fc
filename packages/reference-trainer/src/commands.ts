/**
 * The `rlvr` commands, each a core `Command` object: `rlvr X` runs the same code as the
 * package's own bin where there is one (`rlvr eval` is `rlvr-eval` of @rlvr/eval, `rlvr report`
 * is `rlvr-report` of @rlvr/report). `verify` and `advantages` (`PASSTHROUGH`) run their
 * package's command under the package bin's own name (`rlvr-verify`, `rlvr-advantages`), so that
 * their output, errors included, is that bin's word for word; they load only when run.
 */
import { runCommand } from '@rlvr/core';
import type { CliIo, Command } from '@rlvr/core';
import { evalCommand } from '@rlvr/eval/command';
import { reportCommand } from '@rlvr/report';
import { compareCommand } from './compare/command.js';
import { creditCommand } from './credit/command.js';
import { pretrainCommand } from './pretrain/command.js';
import { trainCommand } from './train/command.js';

/** A command that parses its own arguments; resolves to the exit code. */
type Passthrough = (argv: readonly string[], io: CliIo, signal: AbortSignal) => Promise<number>;

/** Listed by `rlvr -h` only: `PASSTHROUGH` runs them. */
const listed = (summary: string): Command => ({
  summary,
  usage: summary,
  options: {},
  run: () => Promise.reject(new Error('runs through PASSTHROUGH')),
});

export const RLVR_COMMANDS: Readonly<Record<string, Command>> = {
  train: trainCommand,
  compare: compareCommand,
  credit: creditCommand,
  eval: evalCommand,
  pretrain: pretrainCommand,
  report: reportCommand,
  verify: listed('grade answers: rlvr-verify of @rlvr/math-verify, with the same arguments'),
  advantages: listed('per-token advantages from rollout JSONL: rlvr-advantages of @rlvr/advantages'),
};

export const PASSTHROUGH: Readonly<Record<string, Passthrough>> = {
  verify: async (argv, io, signal) => runCommand('rlvr-verify', (await import('@rlvr/math-verify')).verifyCommand, argv, io, signal),
  advantages: async (argv, io, signal) =>
    runCommand('rlvr-advantages', (await import('@rlvr/advantages')).advantagesCommand, argv, io, signal),
};
