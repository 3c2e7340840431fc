import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { CoreError, formatZodIssues } from '@rlvr/core';
import { AdvantagesError } from '../errors.js';
import { InteropRowSchema, interopBatch, interopRowProblem, type InteropRow } from '../interop.js';
import { prepareEstimator, type PreparedEstimator } from '../prepare.js';
import { baselines, estimators, getEstimator, weightings } from '../registry.js';
import { kebabCase, parseArgs, type CliArgs } from './args.js';
import { formatFloat32Array } from './format.js';

/** The streams the CLI talks to (process's, or test doubles). */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `usage: rlvr-advantages [--estimator NAME] [--in FILE] [--weights] [--config FILE.json] [--OPTION VALUE ...]

Reads JSONL rollouts {"group", "reward", "length", "saliency"?, "spans"?} from FILE
(or stdin) and writes one line {"advantages": [...]} per row, in order
(plus "weights" with --weights). Rows of a group must be consecutive; output
is written group by group.

  --estimator NAME   estimator (default grail); BASELINE+WEIGHTING composes, e.g. grpo+grail
  --in FILE          input JSONL (default: stdin)
  --weights          also write the token weights
  --config FILE      estimator options as a JSON object; flags override it
  --OPTION VALUE     an estimator option, e.g. --sigma-w 0.5 --symmetry both
  --list             list estimators, baselines and weightings
  --help             this text, and the options of --estimator

exit status: 0 done, 1 bad input (the message names the line), 2 bad arguments or options`;

/** Run the CLI; resolves to the exit status. Prints only to `io`. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const say = (text: string) => io.stderr.write(`rlvr-advantages: ${text}\n`);
  let args: CliArgs;
  let prepared: PreparedEstimator;
  try {
    args = parseArgs(argv);
    if (args.help) {
      io.stdout.write(USAGE + '\n\n' + describeOptions(args.estimator) + '\n');
      return 0;
    }
    if (args.list) {
      io.stdout.write(listing());
      return 0;
    }
    const fromFile = args.configFile === undefined ? {} : await readConfig(args.configFile);
    prepared = prepareEstimator(args.estimator, { ...fromFile, ...args.options });
    if (prepared.needs.length > 1) {
      throw new AdvantagesError('invalid_argument', `estimator ${args.estimator} needs ${prepared.needs.length} signals (${prepared.needs.join(', ')}); JSONL rows carry one ("saliency")`);
    }
  } catch (err) {
    say(messageOf(err));
    return 2;
  }
  try {
    await stream(args, prepared, io);
    return 0;
  } catch (err) {
    say(messageOf(err));
    return err instanceof AdvantagesError && err.code === 'invalid_argument' ? 2 : 1;
  }
}

function messageOf(err: unknown): string {
  if (err instanceof AdvantagesError || err instanceof CoreError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

async function readConfig(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new AdvantagesError('invalid_argument', `cannot read config file: ${(err as Error).message}`, { file }, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AdvantagesError('invalid_argument', `config file is not valid JSON: ${(err as Error).message}`, { file }, { cause: err });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AdvantagesError('invalid_argument', 'config file must hold a JSON object', { file });
  return value as Record<string, unknown>;
}

/**
 * Read rows, cut them into consecutive groups, estimate each group and write its
 * lines. A batch-coupled baseline (batch whitening) needs the whole input first.
 */
async function stream(args: CliArgs, prepared: PreparedEstimator, io: CliIo): Promise<void> {
  const file = args.input === undefined || args.input === '-' ? undefined : args.input;
  const label = file ?? 'stdin';
  let input: NodeJS.ReadableStream = io.stdin;
  if (file !== undefined) {
    const fileStream = createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      fileStream.once('open', () => resolve());
      fileStream.once('error', (err) => reject(new AdvantagesError('invalid_argument', `cannot read input: ${err.message}`, { file }, { cause: err })));
    });
    input = fileStream;
  }
  const coupled = prepared.estimator.baseline.batchCoupled;
  const needsSaliency = prepared.needs.length > 0;
  const seen = new Set<string>();
  let rows: InteropRow[] = [];
  let lines: number[] = [];
  let current: string | undefined;
  const flush = async () => {
    if (rows.length === 0) return;
    const text = estimateGroup(rows, lines, prepared, args.weights, label);
    rows = [];
    lines = [];
    if (!io.stdout.write(text)) await once(io.stdout, 'drain');
  };
  const reader = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of reader) {
    lineNo++;
    if (line.trim() === '') continue;
    const row = parseLine(line, lineNo, label, needsSaliency);
    const key = JSON.stringify(row.group);
    if (!coupled && key !== current) {
      await flush();
      if (seen.has(key)) {
        throw new AdvantagesError('invalid_line', `group ${key} appeared earlier, separated by other groups; rows of a group must be consecutive`, { file: label, line: lineNo, field: 'group' });
      }
      seen.add(key);
      current = key;
    }
    rows.push(row);
    lines.push(lineNo);
  }
  await flush();
}

function parseLine(text: string, line: number, file: string, needsSaliency: boolean): InteropRow {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AdvantagesError('invalid_line', `not valid JSON: ${(err as Error).message}`, { file, line }, { cause: err });
  }
  const parsed = InteropRowSchema.safeParse(value);
  if (!parsed.success) {
    // the zod message names each field itself
    throw new AdvantagesError('invalid_line', formatZodIssues(parsed.error.issues), { file, line }, { cause: parsed.error });
  }
  const problem = interopRowProblem(parsed.data, needsSaliency);
  if (problem) throw new AdvantagesError('invalid_line', problem.message, { file, line, field: problem.field });
  return parsed.data;
}

/** Output lines for one group (or the whole input, for batch-coupled baselines). */
function estimateGroup(rows: InteropRow[], lines: number[], prepared: PreparedEstimator, withWeights: boolean, file: string): string {
  let result;
  let offsets: Int32Array;
  try {
    const { batch, signals } = interopBatch(rows, prepared.needs);
    offsets = batch.completionOffsets;
    result = prepared.estimate(batch, signals);
  } catch (err) {
    const at = (err as { location?: { rollout?: number } }).location?.rollout;
    if (at !== undefined && (err instanceof AdvantagesError || err instanceof CoreError)) {
      throw new AdvantagesError('invalid_line', err.message.replace(/^[^:]*rollout \d+[^:]*: /, ''), { file, line: lines[at]! }, { cause: err });
    }
    throw err;
  }
  let out = '';
  for (let i = 0; i < rows.length; i++) {
    out += `{"advantages":${formatFloat32Array(result.advantages, offsets[i]!, offsets[i + 1]!)}`;
    if (withWeights) out += `,"weights":${formatFloat32Array(result.weights, offsets[i]!, offsets[i + 1]!)}`;
    out += '}\n';
  }
  return out;
}

function describeOptions(name: string): string {
  let est;
  try {
    est = getEstimator(name);
  } catch (err) {
    return messageOf(err);
  }
  const defaults = est.configSchema.parse({}) as Record<string, unknown>;
  const keys = Object.keys(est.configSchema.shape);
  const head = `estimator ${est.name}: ${est.description}\nneeds signals: ${est.needs.length ? est.needs.join(', ') + ' (from "saliency")' : '(none)'}\n`;
  if (keys.length === 0) return head + 'options: (none)';
  return head + 'options:\n' + keys.map((k) => `  --${kebabCase(k)} (default ${JSON.stringify(defaults[k])})`).join('\n');
}

function listing(): string {
  const rows = (names: string[], get: (n: string) => { description: string }) => names.map((n) => `  ${n.padEnd(24)}${get(n).description}`).join('\n');
  return (
    `estimators:\n${rows(estimators.names(), (n) => estimators.get(n))}\n` +
    `baselines (BASELINE+WEIGHTING composes):\n${rows(baselines.names(), (n) => baselines.get(n))}\n` +
    `weightings:\n${rows(weightings.names(), (n) => weightings.get(n))}\n`
  );
}
