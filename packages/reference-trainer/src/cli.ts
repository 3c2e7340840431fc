#!/usr/bin/env node
/** `rlvr`: the reference trainer's command line (core's layout and exit codes; `commands.ts` lists the commands). */
import { cliMain, runCommand, runCommands } from '@rlvr/core';
import { DOTTED, PASSTHROUGH, RLVR_COMMANDS } from './commands.js';
import { withDottedFlags } from './overrides.js';

cliMain('rlvr', (argv, io, signal) => {
  const [name, ...rest] = argv;
  if (name !== undefined && Object.hasOwn(PASSTHROUGH, name)) return PASSTHROUGH[name]!(rest, io, signal);
  if (name !== undefined && Object.hasOwn(DOTTED, name)) {
    const dotted = withDottedFlags(DOTTED[name]!, rest);
    return runCommand(`rlvr ${name}`, dotted.command, dotted.argv, io, signal);
  }
  return runCommands('rlvr', RLVR_COMMANDS, argv, io, signal);
});
