#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { saliencyCommand } from './command.js';

cliMain('rlvr-saliency', (argv, io, signal) => runCommand('rlvr-saliency', saliencyCommand, argv, io, signal));
