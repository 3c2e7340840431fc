#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { reportCommand } from './command.js';

cliMain('rlvr-report', (argv, io, signal) => runCommand('rlvr-report', reportCommand, argv, io, signal));
