#!/usr/bin/env node
import { cliMain, runCommands } from '@rlvr/core';
import { rolloutCommands } from './cli/commands.js';

cliMain('rlvr-rollout', (argv, io, signal) => runCommands('rlvr-rollout', rolloutCommands, argv, io, signal));
