import { z } from 'zod';
import {
  assertWritable,
  choiceFlag,
  formatLocation,
  formatZodIssues,
  intFlag,
  numberFlag,
  readJsonl,
  usageError,
  writeFileAtomic,
  type Command,
  type CommandContext,
} from '@rlvr/core';
import { selectBackend, BACKEND_NAMES, type BackendName } from './backend.js';
import { loadModel, readModelConfig } from './checkpoint.js';
import { modelDims } from './config.js';
import { PolicyError } from './errors.js';
import { completionLogprobs, type SequenceRow } from './sequences.js';

const BACKEND_FLAG = `  --backend B   auto | ${BACKEND_NAMES.join(' | ')} (default: $RLVR_TFJS_BACKEND, else auto)`;
const EXIT_CODES = 'Exit codes: 0 ok, 1 bad input or model, 2 bad usage.';

const RowSchema = z.object({ prompt: z.array(z.number()), completion: z.array(z.number()) });

/** Rows of a JSONL file and the line of each; errors name the file and line. */
async function readRows(file: string): Promise<{ rows: SequenceRow[]; lines: number[] }> {
  const rows: SequenceRow[] = [];
  const lines: number[] = [];
  for await (const { line, value } of readJsonl(file)) {
    const r = RowSchema.safeParse(value);
    if (!r.success) throw new PolicyError('invalid_input', formatZodIssues(r.error.issues, value), { file, line });
    rows.push(r.data);
    lines.push(line);
  }
  return { rows, lines };
}

function required(ctx: CommandContext, flag: string, what: string): string {
  const v = ctx.values[flag];
  if (typeof v !== 'string' || v === '') throw usageError(`required (${what})`, flag);
  return v;
}

async function startBackend(ctx: CommandContext): Promise<BackendName> {
  const backend = choiceFlag(ctx.values, 'backend', ['auto', ...BACKEND_NAMES] as const) ?? 'auto';
  return selectBackend({ backend }, { info: (m) => ctx.io.stderr.write(m + '\n') });
}

/** `rlvr-policy info`: config, parameter count and the tfjs backend of a checkpoint, as JSON. */
export const policyInfoCommand: Command = {
  summary: 'config, parameter count and the tfjs backend of a checkpoint, as JSON',
  usage: `usage: rlvr-policy info --model DIR [--backend B]

Print the model's config, parameter count, dimensions and the tfjs backend as JSON.

options:
  --model DIR   a model directory (config.json, model.safetensors)
${BACKEND_FLAG}
${EXIT_CODES}`,
  options: { model: { type: 'string' }, backend: { type: 'string' } },
  async run(ctx) {
    const dir = required(ctx, 'model', 'a model directory');
    const config = readModelConfig(dir);
    const backend = await startBackend(ctx);
    const model = loadModel(dir, { trainable: false });
    const info = { model: dir, backend, parameters: model.numParameters(), dims: modelDims(config), config };
    model.dispose();
    ctx.io.stdout.write(JSON.stringify(info, null, 2) + '\n');
  },
};

/** `rlvr-policy logprobs`: the log-probability of each completion token given everything before it. */
export const policyLogprobsCommand: Command = {
  summary: 'log-probs of completion tokens: rows {"prompt", "completion"} -> {"logprobs"}',
  usage: `usage: rlvr-policy logprobs --model DIR --in FILE.jsonl [--out FILE] [--batch-size N] [--temperature T] [--backend B]

Rows {"prompt": number[], "completion": number[]} -> {"logprobs": number[]} per row, in order:
the log-probability of each completion token given everything before it.

options:
  --model DIR       a model directory
  --in FILE         the rows (JSON lines)
  --out FILE        write here, all or nothing (default: stdout)
  --batch-size N    rows per forward pass (default 8)
  --temperature T   divide the logits by T (default 1)
${BACKEND_FLAG}
${EXIT_CODES}`,
  options: {
    model: { type: 'string' },
    in: { type: 'string' },
    out: { type: 'string' },
    'batch-size': { type: 'string' },
    temperature: { type: 'string' },
    backend: { type: 'string' },
  },
  async run(ctx) {
    const dir = required(ctx, 'model', 'a model directory');
    const file = required(ctx, 'in', 'a JSON-lines file of rows');
    const batchSize = intFlag(ctx.values, 'batch-size', { min: 1 }) ?? 8;
    const temperature = numberFlag(ctx.values, 'temperature') ?? 1;
    if (!(temperature > 0)) throw usageError(`must be a number > 0 (got ${JSON.stringify(ctx.values.temperature)})`, 'temperature');
    if (typeof ctx.values.out === 'string') await assertWritable(ctx.values.out);
    const { rows, lines } = await readRows(file);
    await startBackend(ctx);
    const model = loadModel(dir, { trainable: false });
    let lps: Float32Array[];
    try {
      lps = await completionLogprobs(model, rows, { batchSize, temperature });
    } catch (e) {
      // A row error names the row index; say which line of the input it came from.
      if (e instanceof PolicyError && e.location.row !== undefined) {
        const { row, ...rest } = e.location;
        throw new PolicyError(
          e.code,
          e.message.slice(formatLocation(e.location).length),
          { ...rest, file, line: lines[row] },
          { cause: e },
        );
      }
      throw e;
    } finally {
      model.dispose();
    }
    const text = lps.map((lp) => JSON.stringify({ logprobs: Array.from(lp) }) + '\n').join('');
    if (typeof ctx.values.out === 'string') await writeFileAtomic(ctx.values.out, text);
    else ctx.io.stdout.write(text);
  },
};

/** The commands of `rlvr-policy`. */
export const policyCommands: Readonly<Record<string, Command>> = { info: policyInfoCommand, logprobs: policyLogprobsCommand };
