/**
 * `rlvr-advantages` (and `rlvr advantages`): JSONL rollouts in, one line of per-token advantages per
 * row out, streamed group by group. Built on core's CLI layout: the flags are this command's own plus
 * one `--kebab-name VALUE` per option of every registered baseline and weighting.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  CoreError,
  formatLocation,
  formatZodIssues,
  isRlvrError,
  readJsonl,
  usageError,
  type Command,
  type CommandContext,
  type FlagSpec,
} from '@rlvr/core';
import { AdvantagesError } from '../errors.js';
import { InteropRowSchema, interopBatch, interopRowProblem, type InteropRow } from '../interop.js';
import { prepareEstimator, type PreparedEstimator } from '../prepare.js';
import { baselines, estimators, weightings } from '../registry.js';
import type { ConfigSchema } from '../types.js';
import { formatFloat32Array } from './format.js';
import { camelCase, kebabCase, optionValue } from './text-options.js';

const OWN: FlagSpec = {
  estimator: { type: 'string', default: 'grail' },
  in: { type: 'string' },
  weights: { type: 'boolean' },
  config: { type: 'string' },
  list: { type: 'boolean' },
};

const HEAD = `usage: rlvr-advantages [--estimator NAME] [--in FILE] [--weights] [--config FILE.json] [--OPTION VALUE ...]

Reads JSONL rollouts {"group", "reward", "length", "saliency"?, "spans"?} from FILE
(or stdin) and writes one line {"advantages": [...]} per row, in order
(plus "weights" with --weights). Rows of a group must be consecutive; output
is written group by group.

  --estimator NAME   estimator (default grail); BASELINE+WEIGHTING composes, e.g. grpo+grail
  --in FILE          input JSONL (default: stdin)
  --weights          also write the token weights
  --config FILE      estimator options as a JSON object; flags override it
  --OPTION VALUE     an estimator option, e.g. --sigma-w 0.5 --symmetry both (below)
  --list             list estimators, baselines and weightings
  -h, --help         this text

exit status: 0 done, 1 bad input (the message names the file and line), 2 bad arguments or options`;

/** Every registered baseline and weighting, for the flags and the help. */
function parts(): { name: string; configSchema: ConfigSchema }[] {
  return [...baselines.names().map((n) => baselines.get(n)), ...weightings.names().map((n) => weightings.get(n))];
}

/** The flags: this command's own, then one string flag per estimator option (read when the command runs, so later registrations count). */
function flagSpec(): FlagSpec {
  const spec: FlagSpec = { ...OWN };
  for (const part of parts()) {
    for (const key of Object.keys(part.configSchema.shape)) {
      const flag = kebabCase(key);
      if (!Object.hasOwn(spec, flag) && flag !== 'help') spec[flag] = { type: 'string' };
    }
  }
  return spec;
}

function usage(): string {
  const lines = parts()
    .filter((p) => Object.keys(p.configSchema.shape).length > 0)
    .map((p) => {
      const defaults = p.configSchema.safeParse({});
      const values = defaults.success ? (defaults.data as Record<string, unknown>) : {};
      return `  ${p.name}: ${Object.keys(p.configSchema.shape)
        .map((k) => `--${kebabCase(k)} (default ${JSON.stringify(values[k])})`)
        .join(', ')}`;
    });
  return `${HEAD}\n\noptions of each baseline and weighting (an estimator takes its two parts' options):\n${lines.join('\n')}`;
}

export const advantagesCommand: Command = {
  summary: 'per-token advantages from rollout JSONL (GRPO, Dr. GRPO, RLOO, REINFORCE++, GRAIL, OAR-G)',
  get usage() {
    return usage();
  },
  get options() {
    return flagSpec();
  },
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const { values, io } = ctx;
  if (values.list === true) {
    io.stdout.write(listing());
    return 0;
  }
  const estimator = values.estimator as string;
  const fromFile = typeof values.config === 'string' ? await readConfig(values.config) : {};
  const fromFlags: Record<string, unknown> = {};
  for (const [flag, value] of Object.entries(values)) {
    if (!Object.hasOwn(OWN, flag) && flag !== 'help' && typeof value === 'string') fromFlags[camelCase(flag)] = optionValue(value);
  }
  let prepared: PreparedEstimator;
  try {
    prepared = prepareEstimator(estimator, { ...fromFile, ...fromFlags });
  } catch (err) {
    if (err instanceof AdvantagesError && (err.code === 'invalid_config' || err.code === 'unknown_name')) throw usageError(err.message);
    throw err;
  }
  if (prepared.needs.length > 1) {
    throw usageError(
      `estimator ${estimator} needs ${prepared.needs.length} signals (${prepared.needs.join(', ')}); JSONL rows carry one ("saliency")`,
      '--estimator',
    );
  }
  const input = typeof values.in === 'string' && values.in !== '-' ? values.in : ((io.stdin ?? process.stdin) as Readable);
  await stream(input, prepared, values.weights === true, io.stdout);
  return 0;
}

async function readConfig(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CoreError('read_failed', `cannot read the --config file: ${(err as Error).message}`, { file }, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CoreError('read_failed', `the --config file is not valid JSON: ${(err as Error).message}`, { file }, { cause: err });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CoreError('read_failed', 'the --config file must hold a JSON object of estimator options', { file });
  return value as Record<string, unknown>;
}

type Out = CommandContext['io']['stdout'];

/** Writes `text`, waiting for 'drain' when the stream asks (a slow pipe must not make memory grow). */
async function write(out: Out, text: string): Promise<void> {
  if (out.write(text) === false && typeof (out as Partial<NodeJS.WritableStream>).once === 'function')
    await once(out as NodeJS.WritableStream, 'drain');
}

/**
 * Read rows, cut them into consecutive groups, estimate each group and write its
 * lines. A batch-coupled configuration (batch whitening, a batch std) needs the whole input first.
 */
async function stream(input: string | Readable, prepared: PreparedEstimator, withWeights: boolean, out: Out): Promise<void> {
  const file = typeof input === 'string' ? input : 'stdin';
  const needsSaliency = prepared.needs.length > 0;
  const seen = new Set<string>();
  let rows: InteropRow[] = [];
  let lines: number[] = [];
  let current: string | undefined;
  const flush = async () => {
    if (rows.length === 0) return;
    const text = estimateGroup(rows, lines, prepared, withWeights, file);
    rows = [];
    lines = [];
    await write(out, text);
  };
  for await (const { line, value } of readJsonl(input, { name: 'stdin' })) {
    const row = parseRow(value, line, file, needsSaliency);
    const key = JSON.stringify(row.group);
    if (!prepared.batchCoupled && key !== current) {
      await flush();
      if (seen.has(key)) {
        throw new AdvantagesError(
          'invalid_line',
          `group ${key} appeared earlier, separated by other groups; rows of a group must be consecutive`,
          { file, line, field: 'group' },
        );
      }
      seen.add(key);
      current = key;
    }
    rows.push(row);
    lines.push(line);
  }
  await flush();
}

function parseRow(value: unknown, line: number, file: string, needsSaliency: boolean): InteropRow {
  const parsed = InteropRowSchema.safeParse(value);
  // the zod message names each field itself
  if (!parsed.success)
    throw new AdvantagesError('invalid_line', formatZodIssues(parsed.error.issues), { file, line }, { cause: parsed.error });
  const problem = interopRowProblem(parsed.data, needsSaliency);
  if (problem) throw new AdvantagesError('invalid_line', problem.message, { file, line, field: problem.field });
  return parsed.data;
}

/** Output lines for one group (or the whole input, for batch-coupled configurations). */
function estimateGroup(rows: InteropRow[], lines: number[], prepared: PreparedEstimator, withWeights: boolean, file: string): string {
  let result;
  let offsets: Int32Array;
  try {
    const { batch, signals } = interopBatch(rows, prepared.needs);
    offsets = batch.completionOffsets;
    result = prepared.estimate(batch, signals);
  } catch (err) {
    // an error about rollout k is an error about the line it came from
    const at = isRlvrError(err) ? err.location.rollout : undefined;
    if (isRlvrError(err) && at !== undefined) {
      const { rollout: _, ...rest } = err.location;
      const prefix = formatLocation(err.location);
      const message = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
      throw new AdvantagesError('invalid_line', message, { ...rest, file, line: lines[at]! }, { cause: err });
    }
    throw err;
  }
  let text = '';
  for (let i = 0; i < rows.length; i++) {
    text += `{"advantages":${formatFloat32Array(result.advantages, offsets[i]!, offsets[i + 1]!)}`;
    if (withWeights) text += `,"weights":${formatFloat32Array(result.weights, offsets[i]!, offsets[i + 1]!)}`;
    text += '}\n';
  }
  return text;
}

function listing(): string {
  const rows = (names: string[], get: (n: string) => { description: string }) =>
    names.map((n) => `  ${n.padEnd(24)}${get(n).description}`).join('\n');
  return (
    `estimators:\n${rows(estimators.names(), (n) => estimators.get(n))}\n` +
    `baselines (BASELINE+WEIGHTING composes):\n${rows(baselines.names(), (n) => baselines.get(n))}\n` +
    `weightings:\n${rows(weightings.names(), (n) => weightings.get(n))}\n`
  );
}
