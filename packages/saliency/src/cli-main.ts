import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { AnswerSpansSchema, SPAN_STRIDE, formatLocation, formatZodIssues, setSpans, type RolloutBatch } from '@rlvr/core';
import { BACKEND_NAMES, loadModel, selectBackend, writeFileAtomic, type BackendName } from '@rlvr/policy';
import { computeSaliency } from './registry.js';
import { SaliencyError } from './errors.js';

export const METHODS = ['grad-x-emb', 'noisy-kl', 'perturbation'] as const;

export const USAGE = `rlvr-saliency: raw per-token attribution scores of a policy (GRAIL, OAR-G, perturbation)

Usage:
  rlvr-saliency --model DIR --method ${METHODS.join('|')} --in FILE.jsonl [--out FILE] [options]

Input rows: {"prompt": number[], "completion": number[], "spans": {"open": [s, e], "content": [s, e], "close": [s, e]} | null}
  (token ranges in the completion, half-open; other keys are kept for --format advantages)
Output, one line per row, in order:
  --format scores (default)  {"scores": number[] | null}   (null: the row has no answer span)
  --format advantages        {"group", "reward", "length", "saliency", "spans"}: the rows of
                             rlvr-advantages (input rows must carry group and reward; rows without
                             scores get zeros, which the estimators never read: no answer -> weight 1)

Options (all methods):
  --answer-span boxed|content   tokens of the answer loss (default boxed: the whole \\boxed{...})
  --alignment previous|own      position a score is read from (default previous; perturbation: own)
  --temperature T               divide the logits by T (default 1)
  --token-budget N              most padded tokens per forward pass (default 8192)
  --pad-id N                    token id of padding columns (default 0)
  --backend B                   auto | ${BACKEND_NAMES.join(' | ')} (default: $RLVR_TFJS_BACKEND, else auto)
noisy-kl:      --noise-std S (default 1e-3)  --seed N (default 0)
perturbation:  --replacement zero|ID (default zero)  --window N (default: every token)
Exit codes: 0 ok, 1 bad input or model, 2 bad usage.`;

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

const TokenIds = z.array(z.number().int().nonnegative());
const InputRowSchema = z.looseObject({
  prompt: TokenIds,
  completion: TokenIds,
  spans: AnswerSpansSchema.nullable().default(null),
  group: z.union([z.string(), z.number()]).optional(),
  reward: z.number().optional(),
});
type InputRow = z.output<typeof InputRowSchema>;

/** Read JSONL rows; errors name the file and line. Returns the rows and the line of each. */
export function readInput(file: string): { rows: InputRow[]; lines: number[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new SaliencyError('invalid_input', `cannot read input: ${(cause as Error).message}`, { file }, { cause });
  }
  const rows: InputRow[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((line, k) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new SaliencyError('invalid_input', `not valid JSON: ${(cause as Error).message}`, { file, line: k + 1 }, { cause });
    }
    const r = InputRowSchema.safeParse(json);
    if (!r.success) throw new SaliencyError('invalid_input', formatZodIssues(r.error.issues, json), { file, line: k + 1 });
    if (r.data.spans && r.data.spans.close[1] > r.data.completion.length) {
      throw new SaliencyError('invalid_input', `close span ends at ${r.data.spans.close[1]} but the completion has ${r.data.completion.length} tokens`, { file, line: k + 1, field: 'spans' });
    }
    rows.push(r.data);
    lines.push(k + 1);
  });
  return { rows, lines };
}

/** The columnar batch of the rows (groups and rewards are not needed for scores). */
function batchOf(rows: InputRow[]): RolloutBatch {
  const n = rows.length;
  const b: RolloutBatch = {
    numRollouts: n,
    groupIndex: new Int32Array(n),
    promptTokens: Int32Array.from(rows.flatMap((r) => r.prompt)),
    promptOffsets: new Int32Array(n + 1),
    completionTokens: Int32Array.from(rows.flatMap((r) => r.completion)),
    completionOffsets: new Int32Array(n + 1),
    rewards: new Float32Array(n),
    finish: new Uint8Array(n),
    spans: new Int32Array(n * SPAN_STRIDE),
  };
  rows.forEach((r, i) => {
    b.promptOffsets[i + 1] = b.promptOffsets[i]! + r.prompt.length;
    b.completionOffsets[i + 1] = b.completionOffsets[i]! + r.completion.length;
    setSpans(b.spans, i, r.spans);
  });
  return b;
}

/** The shortest decimal that reads back as the same float32. */
export function float32Text(v: number): string {
  if (v === 0) return '0';
  for (let p = 1; p <= 9; p++) {
    const s = Number(v.toPrecision(p));
    if (Math.fround(s) === v) return String(s);
  }
  return String(v);
}

function numberOption(values: Record<string, unknown>, name: string, check: (v: number) => boolean, what: string): number | undefined | string {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const v = Number(raw);
  return check(v) ? v : `--${name} must be ${what}; got ${String(raw)}`;
}

/** Run the CLI; returns the exit code. Everything it prints goes through `io`. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        model: { type: 'string' },
        method: { type: 'string' },
        in: { type: 'string' },
        out: { type: 'string' },
        format: { type: 'string' },
        'answer-span': { type: 'string' },
        alignment: { type: 'string' },
        temperature: { type: 'string' },
        'token-budget': { type: 'string' },
        'pad-id': { type: 'string' },
        'noise-std': { type: 'string' },
        seed: { type: 'string' },
        replacement: { type: 'string' },
        window: { type: 'string' },
        backend: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.err(`rlvr-saliency: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const usage = (msg: string) => {
    io.err(`rlvr-saliency: ${msg}\n\n${USAGE}`);
    return 2;
  };
  if (!values.model) return usage('--model DIR is required');
  if (!values.in) return usage('--in FILE.jsonl is required');
  const method = values.method;
  if (!method || !(METHODS as readonly string[]).includes(method)) return usage(`--method must be one of ${METHODS.join(', ')}; got ${method ?? '(none)'}`);
  const format = values.format ?? 'scores';
  if (format !== 'scores' && format !== 'advantages') return usage(`--format must be scores or advantages; got ${format}`);
  const backend = values.backend ?? 'auto';
  if (backend !== 'auto' && !(BACKEND_NAMES as readonly string[]).includes(backend)) return usage(`--backend must be one of auto, ${BACKEND_NAMES.join(', ')}; got ${backend}`);
  const methodOnly: Record<string, string> = { 'noise-std': 'noisy-kl', seed: 'noisy-kl', replacement: 'perturbation', window: 'perturbation' };
  for (const [flag, m] of Object.entries(methodOnly)) if ((values as Record<string, unknown>)[flag] !== undefined && m !== method) return usage(`--${flag} applies to --method ${m} only`);

  const config: Record<string, unknown> = {};
  if (values['answer-span'] !== undefined) config.answerSpan = values['answer-span'];
  if (values.alignment !== undefined) config.alignment = values.alignment;
  const numeric: [string, string, (v: number) => boolean, string][] = [
    ['temperature', 'temperature', (v) => v > 0, 'a number > 0'],
    ['token-budget', 'tokenBudget', (v) => Number.isInteger(v) && v > 0, 'a positive integer'],
    ['pad-id', 'padId', (v) => Number.isInteger(v) && v >= 0, 'a token id (integer >= 0)'],
    ['noise-std', 'noiseStd', (v) => v >= 0, 'a number >= 0'],
    ['seed', 'seed', (v) => Number.isInteger(v), 'an integer'],
    ['window', 'window', (v) => Number.isInteger(v) && v > 0, 'a positive integer'],
  ];
  for (const [flag, key, check, what] of numeric) {
    const v = numberOption(values, flag, check, what);
    if (typeof v === 'string') return usage(v);
    if (v !== undefined) config[key] = v;
  }
  if (values.replacement !== undefined) {
    const r = values.replacement;
    if (r !== 'zero' && !/^\d+$/.test(r)) return usage(`--replacement must be zero or a token id; got ${r}`);
    config.replacement = r === 'zero' ? 'zero' : Number(r);
  }

  try {
    const { rows, lines } = readInput(values.in);
    if (format === 'advantages') {
      rows.forEach((r, i) => {
        if (r.group === undefined || r.reward === undefined) {
          throw new SaliencyError('invalid_input', '--format advantages needs "group" and "reward" on every row', { file: values.in, line: lines[i], field: r.group === undefined ? 'group' : 'reward' });
        }
      });
    }
    await selectBackend({ backend: backend as BackendName | 'auto' }, { info: (m) => io.err(m) });
    const model = loadModel(values.model, { trainable: false });
    let result;
    try {
      result = computeSaliency(method, model, batchOf(rows), config).result;
    } catch (e) {
      // A rollout error names the rollout index; say which line of the input it came from.
      if (e instanceof SaliencyError && e.location.rollout !== undefined) {
        const { rollout, ...rest } = e.location;
        throw new SaliencyError(e.code, e.message.slice(formatLocation(e.location).length), { ...rest, file: values.in, line: lines[rollout] }, { cause: e });
      }
      throw e;
    } finally {
      model.dispose();
    }
    let off = 0;
    const out = rows.map((r, i) => {
      const len = r.completion.length;
      const s = Array.from(result.scores.subarray(off, off + len), float32Text);
      off += len;
      const scores = result.hasScores[i] ? `[${s.join(',')}]` : 'null';
      if (format === 'scores') return `{"scores":${scores}}`;
      return `{"group":${JSON.stringify(r.group)},"reward":${JSON.stringify(r.reward)},"length":${len},"saliency":[${s.join(',')}],"spans":${JSON.stringify(r.spans)}}`;
    });
    if (result.missing > 0) io.err(`rlvr-saliency: ${result.missing} of ${rows.length} rows have no answer span and no scores`);
    if (values.out) writeFileAtomic(values.out, [out.join('\n') + '\n']);
    else for (const l of out) io.out(l);
    return 0;
  } catch (e) {
    io.err(`rlvr-saliency: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
