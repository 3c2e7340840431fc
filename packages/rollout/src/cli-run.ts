import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CoreError, type Registry } from '@rlvr/core';
import { RolloutError } from './errors.js';
import { defaultTokenizerLoaders, type TokenizerLoader } from './tokenizer-spec.js';
import type { CliIo, CommandContext } from './cli-io.js';
import { SPANS_USAGE, runSpans } from './cli-spans.js';
import { SYNTH_USAGE, runSynth } from './cli-synth.js';

interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** flags that must be given */
  required: readonly string[];
  run(ctx: CommandContext): Promise<void>;
}

const COMMANDS: Record<string, Command> = {
  spans: { usage: SPANS_USAGE, options: { tokenizer: { type: 'string' }, in: { type: 'string' }, out: { type: 'string' }, which: { type: 'string', default: 'last' } }, required: ['tokenizer', 'in'], run: runSpans },
  synth: {
    usage: SYNTH_USAGE,
    options: { count: { type: 'string' }, seed: { type: 'string', default: '0' }, from: { type: 'string', default: '0' }, options: { type: 'string', default: '{}' }, out: { type: 'string' } },
    required: ['count'],
    run: runSynth,
  },
};

const tokenizerHelp = (loaders: Registry<TokenizerLoader>): string =>
  `\nTokenizer SPECs (KIND:ARG):\n${loaders.names().map((n) => `  ${loaders.get(n).usage}`).join('\n')}\n`;
const usage = (loaders: Registry<TokenizerLoader>): string => Object.values(COMMANDS).map((c) => c.usage).join('\n') + tokenizerHelp(loaders);

/**
 * The `rlvr-rollout` command line. Returns the exit code: 0 done, 1 bad input
 * (message on stderr, naming file, line and field), 2 bad usage. `loaders` lets a
 * caller add tokenizer kinds (`@rlvr/policy`'s) to `--tokenizer`.
 */
export async function runCli(argv: readonly string[], io: CliIo, loaders: Registry<TokenizerLoader> = defaultTokenizerLoaders()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    io.stdout.write(usage(loaders));
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!Object.hasOwn(COMMANDS, name) || command === undefined) {
    io.stderr.write(`rlvr-rollout: unknown command "${name}"; known: ${Object.keys(COMMANDS).join(', ')}\n`);
    return 2;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...rest], options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }));
  } catch (e) {
    io.stderr.write(`rlvr-rollout ${name}: ${(e as Error).message}\n${command.usage}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(command.usage + (name === 'spans' ? tokenizerHelp(loaders) : ''));
    return 0;
  }
  const missing = command.required.filter((k) => values[k] === undefined);
  if (missing.length > 0) {
    io.stderr.write(`rlvr-rollout ${name}: ${missing.map((k) => `--${k}`).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required\n${command.usage}`);
    return 2;
  }
  try {
    await command.run({ values, io, loaders });
    return 0;
  } catch (e) {
    if (e instanceof RolloutError || e instanceof CoreError) {
      io.stderr.write(`rlvr-rollout ${name}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
