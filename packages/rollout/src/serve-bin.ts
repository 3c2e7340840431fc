#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { serveCommand } from './serve/command.js';

cliMain('rlvr-serve', (argv, io, signal) => runCommand('rlvr-serve', serveCommand, argv, io, signal));
