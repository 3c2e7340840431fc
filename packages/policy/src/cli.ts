#!/usr/bin/env node
import { cliMain, runCommands } from '@rlvr/core';
import { policyCommands } from './commands.js';

cliMain('rlvr-policy', (argv, io, signal) => runCommands('rlvr-policy', policyCommands, argv, io, signal));
