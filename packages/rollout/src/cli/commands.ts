import type { Command } from '@rlvr/core';
import { spansCommand } from './spans.js';
import { synthCommand } from './synth.js';

/** The commands of `rlvr-rollout` (`runCommands('rlvr-rollout', rolloutCommands, argv, io)`). */
export const rolloutCommands: Readonly<Record<string, Command>> = { synth: synthCommand, spans: spansCommand };
