import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { selectBackend, BACKEND_NAMES } from './backend.js';
import type { BackendName } from './backend.js';
import { loadModel, readModelConfig } from './checkpoint.js';
import { modelDims } from './config.js';
import { PolicyError } from './errors.js';
import { writeFileAtomic } from './safetensors.js';
import { completionLogprobs } from './sequences.js';
import type { SequenceRow } from './sequences.js';

export const USAGE = `rlvr-policy: inspect and score a Qwen3/Llama policy checkpoint (TensorFlow.js)

Usage:
  rlvr-policy info --model DIR [--backend B]
      config, parameter count and the tfjs backend, as JSON
  rlvr-policy logprobs --model DIR --in FILE.jsonl [--out FILE] [--batch-size N] [--temperature T] [--backend B]
      rows {"prompt": number[], "completion": number[]} -> {"logprobs": number[]} per row:
      the log-probability of each completion token given everything before it

Options:
  --backend B   auto | ${BACKEND_NAMES.join(' | ')} (default: $RLVR_TFJS_BACKEND, else auto)
Exit codes: 0 ok, 1 bad input or model, 2 bad usage.`;

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

const RowSchema = z.object({ prompt: z.array(z.number()), completion: z.array(z.number()) });

/** Parse a JSONL file of rows; errors name file and line. */
export function readRows(file: string): SequenceRow[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new PolicyError('invalid_input', `cannot read input: ${(cause as Error).message}`, { file }, { cause });
  }
  const rows: SequenceRow[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new PolicyError('invalid_input', `not valid JSON: ${(cause as Error).message}`, { file, line: i + 1 }, { cause });
    }
    const r = RowSchema.safeParse(json);
    if (!r.success) throw new PolicyError('invalid_input', formatZodIssues(r.error.issues), { file, line: i + 1 });
    rows.push(r.data);
  });
  return rows;
}

/** Run the CLI; returns the exit code. Everything it prints goes through `io`. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        model: { type: 'string' },
        in: { type: 'string' },
        out: { type: 'string' },
        'batch-size': { type: 'string' },
        temperature: { type: 'string' },
        backend: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.err(`rlvr-policy: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const cmd = positionals[0];
  if (values.help || cmd === undefined) {
    (values.help ? io.out : io.err)(USAGE);
    return values.help ? 0 : 2;
  }
  const usage = (msg: string) => {
    io.err(`rlvr-policy ${cmd}: ${msg}\n\n${USAGE}`);
    return 2;
  };
  if (cmd !== 'info' && cmd !== 'logprobs') return usage(`unknown command ${cmd} (commands: info, logprobs)`);
  if (!values.model) return usage('--model DIR is required');
  const backend = values.backend ?? 'auto';
  if (backend !== 'auto' && !(BACKEND_NAMES as readonly string[]).includes(backend)) return usage(`--backend must be one of auto, ${BACKEND_NAMES.join(', ')}; got ${backend}`);
  const batchSize = values['batch-size'] === undefined ? 8 : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1) return usage(`--batch-size must be a positive integer; got ${values['batch-size']}`);
  const temperature = values.temperature === undefined ? 1 : Number(values.temperature);
  if (!(temperature > 0)) return usage(`--temperature must be > 0; got ${values.temperature}`);
  if (cmd === 'logprobs' && !values.in) return usage('--in FILE.jsonl is required');

  try {
    const logger = { info: (m: string) => io.err(m) };
    if (cmd === 'info') {
      const config = readModelConfig(values.model);
      const name = await selectBackend({ backend: backend as BackendName | 'auto' }, logger);
      const model = loadModel(values.model, { trainable: false });
      const info = { model: values.model, backend: name, parameters: model.numParameters(), dims: modelDims(config), config };
      model.dispose();
      io.out(JSON.stringify(info, null, 2));
      return 0;
    }
    const rows = readRows(values.in!);
    await selectBackend({ backend: backend as BackendName | 'auto' }, logger);
    const model = loadModel(values.model, { trainable: false });
    let lps: Float32Array[];
    try {
      lps = completionLogprobs(model, rows, { batchSize, temperature });
    } catch (e) {
      // A row error names the row index; say which line of the input it came from.
      if (e instanceof PolicyError && e.location.row !== undefined) {
        throw new PolicyError(e.code, e.message.replace(/^row \d+: /, ''), { file: values.in, line: lineOfRow(values.in!, e.location.row) }, { cause: e });
      }
      throw e;
    } finally {
      model.dispose();
    }
    const lines = lps.map((lp) => JSON.stringify({ logprobs: Array.from(lp) }));
    if (values.out) writeFileAtomic(values.out, [lines.join('\n') + '\n']);
    else for (const l of lines) io.out(l);
    return 0;
  } catch (e) {
    io.err(`rlvr-policy ${cmd}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

/** 1-based line of the n-th non-blank row. */
function lineOfRow(file: string, row: number): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  let seen = -1;
  for (let i = 0; i < lines.length; i++) if (lines[i].trim() !== '' && ++seen === row) return i + 1;
  return row + 1;
}
