/**
 * `rlvr eval`: argument parsing and terminal output. The evaluation itself is `runEval` (run.ts).
 */
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { assertWritable, writeFileAtomic } from '../atomic-write.js';
import { ReferenceTrainerError } from '../errors.js';
import { StatusLine, timestamp } from '../terminal.js';
import { EVAL_PRESETS, guessPreset, parseEvalOptions, resolvePreset } from './options.js';
import type { EvalDataset, EvalOptions } from './options.js';
import { runEval } from './run.js';
import type { EvalLogger, EvalProgress, EvalResult } from './run.js';
import { formatEvalJson, formatEvalTable } from './table.js';

const PRESET_NAMES = Object.keys(EVAL_PRESETS).join('|');

export const EVAL_USAGE = `usage: rlvr eval (--model DIR | --endpoint URL) --dataset FILE [--dataset FILE ...] [options]

Evaluate a policy the paper's way: n samples per problem, each graded by math-verify against
the gold answer; per dataset and averaged over datasets: mean accuracy (mean over problems of
correct/n), pass@1 and pass@n (unbiased estimator), mean completion tokens, the fraction cut by
the token limit. The table goes to stdout, the full result (options, per-dataset metrics,
per-problem correct counts) to a JSON file, progress to stderr.

policy (one of):
  --model DIR           a local model directory (config.json, model.safetensors, tokenizer)
  --endpoint URL        an OpenAI-compatible server (vLLM, rlvr-serve): its base URL, e.g.
                        http://127.0.0.1:8000/v1 (a URL without a path gets /v1)
  --model-name NAME     the served model (default: the first id of GET URL/models)
  --api-key KEY         sent as a bearer token (default: $OPENAI_API_KEY when set)
  --chat                use /chat/completions: the server applies the model's chat template
                        (thinking off); default /completions with the prompt rendered here
  --concurrency N       requests in flight (default 8)

data:
  --dataset FILE        a JSON-lines file of problems (repeatable)
  --preset NAME         its field layout: ${PRESET_NAMES}
                        (once for all files, or once per --dataset in order; default: guessed
                        from the file name, e.g. AIME24/test.jsonl -> aime24)
  --limit N             the first N problems of each file

sampling:
  --n N                 samples per problem (default 3)
  --temperature X       default 0.6 (0 = greedy: top-p and top-k are then off)
  --top-p X             default 0.95
  --top-k N             default 20 (0 = off)
  --max-tokens N        new tokens per sample (default 8192, less where the context is shorter)
  --seed N              seeds each problem's samples (default 0): the same seed gives the
                        same samples on a local model
  --template NAME       prompt layout: model (local default: the model's chat template, else
                        plain), plain (endpoint default: User:/Assistant: blocks) or chatml
  --batch-size N        local model: rows decoded together (default 16)
  --backend NAME        local model: auto, tensorflow, wasm or cpu (default auto)

output:
  --out FILE            the JSON result (default eval-NAME-YYYYMMDD-HHMMSS.json in the current
                        directory, NAME = the model directory or served model); written whole
                        or not at all, its directory must exist
  -q, --quiet           no progress on stderr
  -h, --help            this help`;

export async function evalCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      model: { type: 'string' },
      endpoint: { type: 'string' },
      'model-name': { type: 'string' },
      'api-key': { type: 'string' },
      chat: { type: 'boolean' },
      concurrency: { type: 'string' },
      dataset: { type: 'string', multiple: true },
      preset: { type: 'string', multiple: true },
      limit: { type: 'string' },
      n: { type: 'string', short: 'n' },
      temperature: { type: 'string' },
      'top-p': { type: 'string' },
      'top-k': { type: 'string' },
      'max-tokens': { type: 'string' },
      seed: { type: 'string' },
      template: { type: 'string' },
      'batch-size': { type: 'string' },
      backend: { type: 'string' },
      out: { type: 'string', short: 'o' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(EVAL_USAGE + '\n');
    return;
  }
  const usage = (m: string) => new ReferenceTrainerError('invalid_options', m);
  if (positionals.length > 0) throw usage(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.model === undefined && values.endpoint === undefined) throw usage('give the policy to evaluate: --model DIR or --endpoint URL');
  if (values.model !== undefined && values.endpoint !== undefined) throw usage('give one of --model and --endpoint, not both');
  if (values.endpoint !== undefined && !/^https?:\/\/[^/]/i.test(values.endpoint)) throw usage(`--endpoint must be an http(s) URL, got ${JSON.stringify(values.endpoint)}`);
  if (values.endpoint === undefined) {
    for (const flag of ['model-name', 'api-key', 'chat', 'concurrency'] as const) if (values[flag] !== undefined) throw usage(`--${flag} goes with --endpoint`);
  } else {
    for (const flag of ['batch-size', 'backend'] as const) if (values[flag] !== undefined) throw usage(`--${flag} goes with --model`);
  }
  const files = values.dataset ?? [];
  if (files.length === 0) throw usage('give at least one --dataset FILE');
  const int = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw usage(`--${flag} must be a non-negative integer, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  const num = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x)) throw usage(`--${flag} must be a number, got ${JSON.stringify(v)}`);
    return x;
  };
  const input: Record<string, unknown> = {
    datasets: datasetsOf(files, values.preset ?? []),
    model: values.model,
    endpoint: values.endpoint,
    modelName: values['model-name'],
    apiKey: values['api-key'] ?? (values.endpoint !== undefined && process.env.OPENAI_API_KEY ? process.env.OPENAI_API_KEY : undefined),
    chat: values.chat,
    concurrency: int('concurrency', values.concurrency),
    n: int('n', values.n),
    temperature: num('temperature', values.temperature),
    topP: num('top-p', values['top-p']),
    topK: int('top-k', values['top-k']),
    maxTokens: int('max-tokens', values['max-tokens']),
    limit: int('limit', values.limit),
    seed: int('seed', values.seed),
    template: values.template,
    batchSize: int('batch-size', values['batch-size']),
    backend: values.backend,
  };
  for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
  const options = parseOptions(input);

  // a mistyped --out fails now, not after the evaluation
  const started = new Date();
  await assertWritable(values.out ?? resolve('eval.json'));
  const logger = terminalLogger(values.quiet === true);
  let result: EvalResult;
  try {
    result = await runEval(options, logger);
  } finally {
    logger.done();
  }
  const out = values.out ?? defaultOut(result, started);
  await writeFileAtomic(out, formatEvalJson(result));
  process.stdout.write(formatEvalTable(result) + '\n');
  process.stdout.write(`results: ${out}\n`);
}

/** The option names of the command line, for messages. */
const FLAGS: Record<string, string> = { modelName: '--model-name', apiKey: '--api-key', topP: '--top-p', topK: '--top-k', maxTokens: '--max-tokens', batchSize: '--batch-size' };

/** `parseEvalOptions`, its messages naming the flags (--top-p) rather than the fields (topP). */
function parseOptions(input: Record<string, unknown>): EvalOptions {
  try {
    return parseEvalOptions(input);
  } catch (err) {
    const cause = (err as Error).cause;
    if (!(cause instanceof z.ZodError)) throw err;
    const issues = cause.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      return { ...i, path: key === 'datasets' ? i.path : [FLAGS[key] ?? `--${key}`] };
    });
    const flagged = Object.fromEntries(Object.entries(input).map(([k, v]) => [k === 'datasets' ? k : (FLAGS[k] ?? `--${k}`), v]));
    throw new ReferenceTrainerError('invalid_options', formatZodIssues(issues, flagged), {}, { cause });
  }
}

/** Pair each file with its preset: one --preset for all, one per file, or guessed from the file name. */
export function datasetsOf(files: readonly string[], presets: readonly string[]): EvalDataset[] {
  const usage = (m: string) => new ReferenceTrainerError('invalid_options', m);
  if (presets.length > 1 && presets.length !== files.length) throw usage(`${presets.length} --preset for ${files.length} --dataset: give one for all files or one per file`);
  const resolved = presets.map((p) => {
    const r = resolvePreset(p);
    if (r === undefined) throw usage(`unknown --preset ${JSON.stringify(p)} (available: ${Object.keys(EVAL_PRESETS).join(', ')})`);
    return r;
  });
  return files.map((file, i) => {
    if (!existsSync(file)) throw new ReferenceTrainerError('missing_file', 'dataset not found', { file });
    const preset = resolved.length === 0 ? guessPreset(file) : resolved[resolved.length === 1 ? 0 : i]!;
    if (preset === undefined) throw usage(`cannot tell the layout of ${file} from its name: pass --preset (${Object.keys(EVAL_PRESETS).join(', ')})`);
    return { file, preset };
  });
}

/** `eval-warmup-20261203-061500.json`: a new file per run, so repeating a command never overwrites. */
function defaultOut(result: EvalResult, started: Date): string {
  const name = result.policy.kind === 'model' ? basename(result.policy.dir) : (result.policy.model.split('/').at(-1) ?? 'endpoint');
  return `eval-${name.replace(/[^A-Za-z0-9_.+-]/g, '_') || 'model'}-${timestamp(started)}.json`;
}

/** Progress on stderr: a live line on a terminal, a line every tenth of a dataset otherwise. */
function terminalLogger(quiet: boolean): EvalLogger & { done(): void } {
  const out = new StatusLine('rlvr eval', quiet);
  let lastTenth = -1;
  return {
    info: (m) => out.line(m),
    warn: (m) => out.line(`warning: ${m}`),
    progress(p: EvalProgress) {
      const text = `${p.dataset} (${p.index + 1}/${p.datasets}): ${p.done}/${p.problems} problems`;
      const tenth = Math.floor((10 * p.done) / p.problems);
      if (p.done === 0) lastTenth = 0;
      const log = p.done > 0 && tenth > lastTenth && p.done < p.problems;
      if (log) lastTenth = tenth;
      out.status(p.done === p.problems ? '' : text, log);
    },
    done: () => out.status('', false),
  };
}
