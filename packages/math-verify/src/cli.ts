#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { verifyCommand } from './command.js';

cliMain('rlvr-verify', (argv, io, signal) => runCommand('rlvr-verify', verifyCommand, argv, io, signal));
