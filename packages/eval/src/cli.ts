#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { evalCommand } from './command.js';

cliMain('rlvr-eval', (argv, io, signal) => runCommand('rlvr-eval', evalCommand, argv, io, signal));
