#!/usr/bin/env node
/** `rlvr`: the reference trainer's command line (core's layout and exit codes; `commands.ts` lists the commands). */
import { cliMain, runCommands } from '@rlvr/core';
import { PASSTHROUGH, RLVR_COMMANDS } from './commands.js';

cliMain('rlvr', (argv, io, signal) => {
  const [name, ...rest] = argv;
  if (name !== undefined && Object.hasOwn(PASSTHROUGH, name)) return PASSTHROUGH[name]!(rest, io, signal);
  return runCommands('rlvr', RLVR_COMMANDS, argv, io, signal);
});
