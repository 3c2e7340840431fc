/**
 * The one layout of every rlvr command line: `node:util` `parseArgs` (no dependency, strict, the
 * same flag grammar everywhere), usage on `-h`, and one exit-code contract:
 *
 * | exit | meaning |
 * |---|---|
 * | 0 | done (also when a downstream pipe closed early: `rlvr-verify ... \| head -1`) |
 * | 1 | bad input or a failure, one line on stderr naming file, line or field |
 * | 2 | bad usage: an unknown flag, a malformed or out-of-range value; the message names the flag (and the nearest one for a typo), then a line pointing at `--help` |
 * | 130 | interrupted (Ctrl-C); unfinished output files are removed |
 *
 * A command never prints a stack trace: an unexpected error is one line too, and `RLVR_DEBUG=1` adds
 * the stack.
 */
import { parseArgs } from 'node:util';
import { formatZodIssues } from './config.js';
import type { IssueLike } from './config.js';
import { type CoreError, isRlvrError, usageError } from './errors.js';
import { didYouMean } from './suggest.js';
import { removePendingTempFiles } from './files.js';
import { watchLauncher } from './launcher.js';
import type { TextSource } from './jsonl.js';
import { splitDottedFlags, type DottedOverride } from './overrides.js';

/** One flag of a command: `node:util` `parseArgs`' option shape, written out so that the public types need no `@types/node`. */
export interface FlagOption {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  default?: string | boolean | string[] | boolean[];
}
export type FlagSpec = Record<string, FlagOption>;
export type FlagValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** Where a command reads and writes: the process streams in a bin, buffers in tests. */
export interface CliIo {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  /** where rows are piped in (a Node `Readable` such as `process.stdin`, or any async iterable of chunks) */
  stdin?: TextSource;
  /** Environment variables (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** What a command's `run` gets. */
export interface CommandContext {
  values: FlagValues;
  positionals: string[];
  io: CliIo;
  /** Aborted on Ctrl-C / SIGTERM. A `graceful` command reads it to stop cleanly; others are stopped for it. */
  signal: AbortSignal;
  /** Colour and cursor codes may be written to stderr: it is a terminal, and `NO_COLOR` is unset. */
  color: boolean;
  /** `prog command`, for messages. */
  prog: string;
  /** The dotted flags of a `dotted` command, in order (`overrides.ts`: `applyOverrides` sets them on a config). */
  overrides?: readonly DottedOverride[];
}

export interface Command {
  /** One line for the list of commands. */
  summary?: string;
  /** The full help text, printed on `-h` (a usage error points at it). */
  usage: string;
  options: FlagSpec;
  /** Positional arguments allowed (default: none). */
  positionals?: boolean;
  /**
   * Nested config options as dotted flags (`--trainer.schedule.lr 1e-5`): taken out of the
   * arguments before the parser sees them, and handed to `run` as `ctx.overrides`.
   */
  dotted?: boolean;
  /**
   * A command that stops cleanly on Ctrl-C (saves a checkpoint, drains requests): the first signal
   * aborts `ctx.signal` and the command decides its exit code; a second one exits 130 at once.
   * Otherwise the first signal ends the command with exit 130 and its unfinished output files removed.
   */
  graceful?: boolean;
  /** Returns the exit code (default 0). Throw `usageError` for exit 2, any rlvr error for exit 1. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a command may end without returning (exit 0)
  run(ctx: CommandContext): Promise<number | void>;
}

/**
 * The usage error (exit 2) for command-line values that failed an options schema, each issue named
 * by its flag rather than its field: `--n: Too small: expected number to be >=1 (got 0); --top-p:
 * ...`. `flags` maps a top-level field to its flag (`{ topP: '--top-p' }`); any other field `f` is
 * `--f`. `input` is what was parsed, keyed by field, so the values given are quoted too.
 */
export function schemaUsageError(
  issues: readonly IssueLike[],
  input: Record<string, unknown>,
  flags: Readonly<Record<string, string>> = {},
): CoreError {
  const flagOf = (field: string): string => flags[field] ?? `--${field}`;
  const flagged = issues.map((i) => (i.path.length === 0 ? i : { ...i, path: [flagOf(String(i.path[0])), ...i.path.slice(1)] }));
  const values = Object.fromEntries(Object.entries(input).map(([k, v]) => [flagOf(k), v]));
  return usageError(formatZodIssues(flagged, values));
}

/** Whether colour may go to `stream`: `FORCE_COLOR` wins, then `NO_COLOR`, `TERM=dumb`, then whether it is a terminal. */
export function useColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

interface NumberFlagOptions {
  min?: number;
  max?: number;
  integer?: boolean;
}

/**
 * The number a string flag holds, or `undefined` when the flag was not given. Out of range or not a
 * number: a usage error naming the flag and the allowed range.
 */
export function numberFlag(values: FlagValues, name: string, opts: NumberFlagOptions = {}): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw usageError(`takes a value`, name);
  const n = raw.trim() === '' ? NaN : Number(raw);
  const { min = -Infinity, max = Infinity, integer = false } = opts;
  const kind = integer ? 'an integer' : 'a number';
  const range =
    min > -Infinity && max < Infinity ? ` from ${min} to ${max}` : min > -Infinity ? ` >= ${min}` : max < Infinity ? ` <= ${max}` : '';
  if (!Number.isFinite(n) || (integer && !Number.isSafeInteger(n)) || n < min || n > max) {
    throw usageError(`must be ${kind}${range} (got ${JSON.stringify(raw)})`, name);
  }
  return n;
}

/** `numberFlag` with `integer: true`. */
export function intFlag(values: FlagValues, name: string, opts: Omit<NumberFlagOptions, 'integer'> = {}): number | undefined {
  return numberFlag(values, name, { ...opts, integer: true });
}

/** One of `allowed`, or a usage error listing them. */
export function choiceFlag<T extends string>(values: FlagValues, name: string, allowed: readonly T[]): T | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && (allowed as readonly string[]).includes(raw)) return raw as T;
  throw usageError(`must be one of ${allowed.join(', ')} (got ${JSON.stringify(raw)})`, name);
}

/**
 * `--workers N|auto`, as every command that runs the policy takes it: an integer from 1 to 256, or
 * `auto` (the caller resolves it: one worker per available core); `undefined` when not given.
 */
export function workersFlag(values: FlagValues, name = 'workers'): number | 'auto' | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (raw === 'auto') return raw;
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= 256)) throw usageError(`must be auto or an integer from 1 to 256 (got ${JSON.stringify(raw)})`, name);
  return n;
}

const HELP: FlagSpec = { help: { type: 'boolean', short: 'h' } };

/** Run one command on `argv` (without node and the script). Never throws: returns the exit code. */
export async function runCommand(
  prog: string,
  command: Command,
  argv: readonly string[],
  io: CliIo,
  signal: AbortSignal = new AbortController().signal,
): Promise<number> {
  const env = io.env ?? process.env;
  let values: FlagValues;
  let positionals: string[];
  let overrides: DottedOverride[] | undefined;
  let args = [...argv];
  try {
    if (command.dotted === true) ({ rest: args, overrides } = splitDottedFlags(argv));
    ({ values, positionals } = parseArgs({
      args,
      options: { ...HELP, ...command.options },
      strict: true,
      allowPositionals: command.positionals === true,
    }) as { values: FlagValues; positionals: string[] });
  } catch (e) {
    if (isRlvrError(e)) return reportError(prog, e, io, env);
    io.stderr.write(`${prog}: ${parseArgsMessage(e, ['help', ...Object.keys(command.options)])}\n${helpHint(prog)}\n`);
    return 2;
  }
  if (values.help === true) {
    io.stdout.write(command.usage.trimEnd() + '\n');
    return 0;
  }
  try {
    const ctx: CommandContext = {
      values,
      positionals,
      io,
      signal,
      color: useColor(io.stderr, env),
      prog,
      ...(overrides === undefined ? {} : { overrides }),
    };
    const code = command.graceful === true ? await command.run(ctx) : await untilAborted(command.run(ctx), signal);
    return code ?? 0;
  } catch (e) {
    return reportError(prog, e, io, env);
  }
}

/** Run `prog COMMAND [flags]`: the command list on `-h` or no command, exit 2 on an unknown one. */
export async function runCommands(
  prog: string,
  commands: Readonly<Record<string, Command>>,
  argv: readonly string[],
  io: CliIo,
  signal?: AbortSignal,
): Promise<number> {
  const [name, ...rest] = argv;
  const list = (): string =>
    `usage: ${prog} COMMAND [options]   (${prog} COMMAND -h for a command's options)\n\ncommands:\n` +
    Object.entries(commands)
      .map(([n, c]) => `  ${n.padEnd(12)} ${c.summary ?? ''}`.trimEnd())
      .join('\n') +
    '\n';
  if (name === undefined || name === '-h' || name === '--help') {
    (name === undefined ? io.stderr : io.stdout).write(list());
    return name === undefined ? 2 : 0;
  }
  if (!Object.hasOwn(commands, name)) {
    io.stderr.write(
      `${prog}: unknown command ${JSON.stringify(name)}${didYouMean(name, Object.keys(commands))}; known: ${Object.keys(commands).join(', ')}\n`,
    );
    return 2;
  }
  return runCommand(`${prog} ${name}`, commands[name]!, rest, io, signal);
}

/** `work`, or an AbortError as soon as `signal` aborts (a command that does not stop gracefully stops at once). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new DOMException('interrupted', 'AbortError'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new DOMException('interrupted', 'AbortError'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** node's message, with the nearest flag of `flags` for an unknown long one (`--stpes`: did you mean --steps?). */
function parseArgsMessage(e: unknown, flags: readonly string[]): string {
  const msg = e instanceof Error ? e.message : String(e);
  const unknown = /^Unknown option '--([^'=]+)'/.exec(msg)?.[1];
  // node's messages end with advice about '--' that does not apply to these commands
  const text = msg.replace(/\. To specify a positional argument.*$/s, '').replace(/\s*\n\s*/g, ' ');
  return unknown === undefined ? text : `${text}${didYouMean(unknown, flags, '--')}`;
}

/** The one line after a usage error: where the options are. */
const helpHint = (prog: string): string => `(${prog} --help lists the options)`;

function reportError(prog: string, e: unknown, io: CliIo, env: Record<string, string | undefined>): number {
  if (isRlvrError(e) && e.code === 'usage') {
    io.stderr.write(`${prog}: ${oneLine(e.message)}\n${helpHint(prog)}\n`);
    return 2;
  }
  if (isAbort(e)) {
    io.stderr.write(`${prog}: interrupted\n`);
    return 130;
  }
  if (isRlvrError(e)) {
    io.stderr.write(`${prog}: ${oneLine(e.message)}\n`);
    return 1;
  }
  const msg = e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e);
  io.stderr.write(`${prog}: internal error: ${oneLine(msg)}${env.RLVR_DEBUG ? '' : ' (RLVR_DEBUG=1 prints the stack)'}\n`);
  if (env.RLVR_DEBUG && e instanceof Error && e.stack) io.stderr.write(e.stack + '\n');
  return 1;
}

function isAbort(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || (e as NodeJS.ErrnoException).code === 'ABORT_ERR');
}

const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ').trim();

/**
 * The entry of a bin: runs `main` on the process's arguments and streams, and makes the process
 * keep the exit-code contract whatever happens. A closed stdout or stderr (EPIPE) ends the process
 * quietly; an error no promise caught becomes one line. Ctrl-C / SIGTERM abort `signal`: a graceful
 * command finishes on its own terms, any other returns 130 at once; a second signal exits 130 at
 * once. A bin that npm started (`npx BIN &`) takes its parent's exit as that signal (`watchLauncher`).
 * Unfinished output files are removed on every way out.
 */
export function cliMain(prog: string, main: (argv: readonly string[], io: CliIo, signal: AbortSignal) => Promise<number>): void {
  const controller = new AbortController();
  const quietExit = (err: NodeJS.ErrnoException): void => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') {
      removePendingTempFiles();
      process.exit(process.exitCode ?? 0);
    }
  };
  process.stdout.on('error', quietExit);
  process.stderr.on('error', quietExit);
  const fatal = (e: unknown): void => {
    if ((e as NodeJS.ErrnoException | undefined)?.code === 'EPIPE') {
      quietExit(e as NodeJS.ErrnoException);
      return;
    }
    removePendingTempFiles();
    process.exitCode = reportError(prog, e, { stdout: process.stdout, stderr: process.stderr }, process.env);
    process.exit();
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  process.on('exit', removePendingTempFiles);
  const onSignal = (sig: string): void => {
    if (!controller.signal.aborted) {
      // the reason names the signal: a graceful command's "stopping after this step" says which one it got
      controller.abort(new DOMException(`interrupted by ${sig}`, 'AbortError'));
      return;
    }
    removePendingTempFiles();
    process.stderr.write(`${prog}: interrupted\n`);
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // started by npm (`npx BIN &`): npm's death does not reach this process as a signal, so it counts as one
  watchLauncher(() => onSignal('SIGTERM'));
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
  main(process.argv.slice(2), io, controller.signal).then((code) => {
    process.exitCode = code;
    // an interrupted command may leave work (a worker pool, a timer) that would keep the process up
    if (code === 130) process.exit(130);
  }, fatal);
}
