#!/usr/bin/env node
import { cliMain, runCommand } from '@rlvr/core';
import { rewardServerCommand } from './command.js';

cliMain('rlvr-reward-server', (argv, io, signal) => runCommand('rlvr-reward-server', rewardServerCommand, argv, io, signal));
