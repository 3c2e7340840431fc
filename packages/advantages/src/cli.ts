#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { advantagesCommand } from './cli/command.js';

cliMain('rlvr-advantages', (argv, io, signal) => runCommand('rlvr-advantages', advantagesCommand, argv, io, signal));
