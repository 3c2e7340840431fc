/**
 * `rlvr eval` / `rlvr-eval`: argument parsing and terminal output, a core `Command` that the
 * `rlvr` CLI composes. The evaluation itself is `runEval` (run.ts), loaded only when the command
 * runs, so composing this command loads no TensorFlow.js.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import {
  StatusLine,
  assertWritable,
  intFlag,
  isRlvrError,
  numberFlag,
  schemaUsageError,
  timestamp,
  usageError,
  writeFileAtomic,
} from '@rlvr/core';
import type { Command, FlagValues } from '@rlvr/core';
import type { EvalLogger, EvalProgress, EvalResult } from './run.js';

/** The `--preset` names (the presets of `@rlvr/tasks`, aliases apart; a test keeps the two equal). */
export const PRESET_NAMES = [
  'deepmath',
  'math500',
  'aime',
  'amc',
  'college_math',
  'minerva_math',
  'olympiadbench',
  'gsm8k',
  'synthetic',
] as const;

export const EVAL_USAGE = `usage: rlvr eval (--model DIR | --endpoint URL) --dataset FILE [--dataset FILE ...] [options]
       rlvr eval --held-out RUN_DIR [--model DIR | --endpoint URL] [options]
       (also installed as rlvr-eval, with the same options)

Evaluate a policy the paper's way: n samples per problem, each graded by math-verify against
the gold answer; per dataset and averaged over datasets: mean accuracy (mean over problems of
correct/n), pass@1 and pass@n (unbiased estimator), mean completion tokens, the fraction cut by
the token limit; where the rows carry a chain (the synthetic tasks), the Step-Quality metrics
(useful-step density, first errors found and where, tokens per solved problem; mean ± SE over
problems) in a second table. The table goes to stdout, the full result (options, per-dataset
metrics, per-problem correct counts) to a JSON file, progress to stderr.

policy (one of):
  --model DIR           a local model directory (config.json, model.safetensors, tokenizer)
  --endpoint URL        an OpenAI-compatible server (vLLM, rlvr-serve): its base URL, e.g.
                        http://127.0.0.1:8000/v1 (a URL without a path gets /v1)
  --model-name NAME     the served model (default: the first id of GET URL/models)
  --api-key KEY         sent as a bearer token (default: $OPENAI_API_KEY when set)
  --chat                use /chat/completions: the server applies the model's chat template
                        (thinking off); default /completions with the prompt rendered here
  --concurrency N       requests in flight (default 8)
  --stream              receive each completion as it is generated (server-sent events): no
                        proxy or timeout cuts a long generation; the same results
  --token-ids           ask for every sampled token id with its log-prob, as RL clients do
                        (several times the bytes); default: the text, and the token counts
                        from usage.completion_tokens; the same results

data:
  --dataset FILE        a JSON-lines file of problems (repeatable)
  --held-out RUN_DIR    instead: the held-out problems of an rlvr train run, regenerated from its
                        config.json as the run chose them; the policy defaults to RUN_DIR/model
  --preset LAYOUT       its field layout: ${PRESET_NAMES.join('|')}
                        (aliases: aime24, amc23, minerva, college, olympiad), or a field mapping
                        as rlvr train reads in data.format, e.g.
                        '{"question":"problem","answer":"solution","answerFormat":"last_boxed"}'
                        (once for all files, or once per --dataset in order; default: guessed
                        from the file name, e.g. AIME24/test.jsonl -> aime)
  --limit N             the first N problems of each file
  --max-question-chars N  a longer question stops the run before any work, naming its file
                        and line (default 100000)

sampling:
  --n N                 samples per problem (default 3)
  --temperature X       default 0.6 (0 = greedy: top-p and top-k are then off)
  --top-p X             default 0.95
  --top-k N             default 20 (0 = off)
  --max-tokens N        new tokens per sample (default 8192, less where the context is shorter)
  --seed N              seeds each problem's samples (default 0): the same seed gives the
                        same samples on a local model
  --template NAME       prompt layout: model (default: the model's chat template, else plain;
                        an endpoint renders it with its POST /tokenize, as vLLM and rlvr-serve
                        offer, and falls back to plain with a warning), plain (User:/Assistant:
                        blocks) or chatml. The token budget counts the prompts exactly either way
  --batch-size N        local model: rows decoded together (default 16)
  --backend NAME        local model: auto, tensorflow, webgpu, wasm or cpu (default auto)
  --workers N|auto      local model: policy worker threads decoding side by side (default auto:
                        one per available core; 1: this thread only); the samples are the same

output:
  --out FILE            the JSON result (default eval-NAME-YYYYMMDD-HHMMSS.json, NAME = the run with
                        --held-out, else the model directory (its run for RUN_DIR/model) or served
                        model: in the run directory for --held-out RUN_DIR and --model RUN_DIR/model,
                        else in the current directory); written whole or not at all, its directory
                        must exist
  -q, --quiet           no progress on stderr
  -h, --help            this help`;

/** Option field -> flag, for messages. */
const FLAGS: Record<string, string> = {
  modelName: '--model-name',
  apiKey: '--api-key',
  topP: '--top-p',
  topK: '--top-k',
  maxTokens: '--max-tokens',
  batchSize: '--batch-size',
  maxQuestionChars: '--max-question-chars',
};

export const evalCommand: Command = {
  summary: "score a policy the paper's way: n samples per problem, mean accuracy, pass@1, pass@n (--model DIR or --endpoint URL)",
  usage: EVAL_USAGE,
  options: {
    model: { type: 'string' },
    endpoint: { type: 'string' },
    'model-name': { type: 'string' },
    'api-key': { type: 'string' },
    chat: { type: 'boolean' },
    concurrency: { type: 'string' },
    stream: { type: 'boolean' },
    'token-ids': { type: 'boolean' },
    dataset: { type: 'string', multiple: true },
    'held-out': { type: 'string' },
    preset: { type: 'string', multiple: true },
    limit: { type: 'string' },
    'max-question-chars': { type: 'string' },
    n: { type: 'string', short: 'n' },
    temperature: { type: 'string' },
    'top-p': { type: 'string' },
    'top-k': { type: 'string' },
    'max-tokens': { type: 'string' },
    seed: { type: 'string' },
    template: { type: 'string' },
    'batch-size': { type: 'string' },
    backend: { type: 'string' },
    workers: { type: 'string' },
    out: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  },
  async run({ values, io, color, prog }) {
    const runDir = values['held-out'] as string | undefined;
    if (runDir !== undefined && values.dataset !== undefined)
      throw usageError('give --held-out RUN_DIR or --dataset FILE, not both', 'held-out');
    const model =
      (values.model as string | undefined) ?? (runDir !== undefined && values.endpoint === undefined ? join(runDir, 'model') : undefined);
    const endpoint = values.endpoint as string | undefined;
    if (model === undefined && endpoint === undefined) throw usageError('give the policy to evaluate: --model DIR or --endpoint URL');
    if (model !== undefined && endpoint !== undefined) throw usageError('give one of --model and --endpoint, not both');
    if (endpoint !== undefined && !/^https?:\/\/[^/]/i.test(endpoint))
      throw usageError(`must be an http(s) URL, got ${JSON.stringify(endpoint)}`, 'endpoint');
    if (endpoint === undefined) {
      for (const flag of ['model-name', 'api-key', 'chat', 'concurrency', 'stream', 'token-ids'] as const)
        if (values[flag] !== undefined) throw usageError('goes with --endpoint', flag);
    } else {
      for (const flag of ['batch-size', 'backend', 'workers'] as const)
        if (values[flag] !== undefined) throw usageError('goes with --model', flag);
    }
    const files = (values.dataset as string[] | undefined) ?? [];
    if (files.length === 0 && runDir === undefined) throw usageError('give at least one --dataset FILE (or --held-out RUN_DIR)');
    if (runDir !== undefined && values.preset !== undefined) throw usageError('goes with --dataset', 'preset');
    const env = io.env ?? process.env;
    const { datasetsOf } = await import('./datasets-of.js');
    let scratch: string | undefined;
    let datasets: unknown;
    if (runDir !== undefined) {
      const { writeHeldOut } = await import('./run-held-out.js');
      scratch = await mkdtemp(join(tmpdir(), 'rlvr-held-out-'));
      const file = join(scratch, 'held-out.jsonl');
      await writeHeldOut(runDir, file).catch(async (err: unknown) => {
        await rm(scratch!, { recursive: true, force: true });
        throw err;
      });
      datasets = [{ file, preset: 'synthetic', name: 'held-out' }];
    } else datasets = datasetsOf(files, (values.preset as string[] | undefined) ?? []);
    try {
      return await evaluate(datasets);
    } finally {
      if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    }
    async function evaluate(datasets: unknown): Promise<number> {
      const input: Record<string, unknown> = {
        datasets,
        model,
        endpoint,
        modelName: values['model-name'],
        apiKey: values['api-key'] ?? (endpoint !== undefined && env.OPENAI_API_KEY ? env.OPENAI_API_KEY : undefined),
        chat: values.chat,
        concurrency: int(values, 'concurrency'),
        stream: values.stream,
        tokenIds: values['token-ids'],
        n: int(values, 'n'),
        temperature: numberFlag(values, 'temperature'),
        topP: numberFlag(values, 'top-p'),
        topK: int(values, 'top-k'),
        maxTokens: int(values, 'max-tokens'),
        limit: int(values, 'limit'),
        maxQuestionChars: int(values, 'max-question-chars'),
        seed: int(values, 'seed'),
        template: values.template,
        batchSize: int(values, 'batch-size'),
        backend: values.backend,
        workers:
          values.workers === undefined || values.workers === 'auto'
            ? values.workers
            : /^\d+$/.test(values.workers as string)
              ? Number(values.workers)
              : values.workers,
      };
      for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
      const { EvalOptionsSchema } = await import('./options.js');
      const parsed = EvalOptionsSchema.safeParse(input);
      if (!parsed.success) throw schemaUsageError(parsed.error.issues, input, FLAGS);

      // a mistyped --out fails now, not after the evaluation
      const out = values.out as string | undefined;
      const started = new Date();
      const home = resultsHome(runDir, model);
      await assertWritable(out ?? join(home, 'eval.json'));
      const { runEval, secondsPer } = await import('./run.js');
      const logger = progressLogger(new StatusLine(io.stderr, prog, { live: color, quiet: values.quiet === true }), secondsPer);
      let result: EvalResult;
      try {
        result = await runEval(parsed.data, logger);
      } catch (err) {
        // options that do not fit the model (a --max-tokens beyond its context) are usage errors too
        if (isRlvrError(err) && err.name === 'EvaluationError' && err.code === 'invalid_options') throw usageError(err.message);
        throw err;
      } finally {
        logger.done();
      }
      const { formatEvalJson, formatEvalTable } = await import('./table.js');
      const file = out ?? join(home, defaultOut(result, started, runDir));
      await writeFileAtomic(file, formatEvalJson(result));
      io.stdout.write(formatEvalTable(result) + '\n');
      io.stdout.write(`results: ${file}\n`);
      return 0;
    }
  },
};

/** A non-negative integer flag (ranges are the options schema's, named by flag when they fail). */
function int(values: FlagValues, name: string): number | undefined {
  return intFlag(values, name, { min: 0 });
}

/**
 * Where the results go without `--out`: a training run's directory (`--held-out RUN_DIR`, or `--model RUN_DIR/model`
 * of a run that logged metrics) keeps its evaluations beside its own records; anything else (a downloaded model
 * directory, which may be shared or read-only; an endpoint) the current directory.
 */
function resultsHome(runDir: string | undefined, model: string | undefined): string {
  if (runDir !== undefined) return runDir;
  const dir = model === undefined ? undefined : dirname(resolve(model));
  return dir !== undefined && basename(resolve(model!)) === 'model' && existsSync(join(dir, 'metrics.jsonl')) ? dir : '.';
}

/** `eval-warmup-20261203-061500.json`: a new file per run, so repeating a command never overwrites; a run's model is named after its run. */
function defaultOut(result: EvalResult, started: Date, runDir: string | undefined): string {
  const p = result.policy;
  const dir = p.kind === 'model' ? p.dir : undefined;
  const name =
    runDir !== undefined
      ? basename(resolve(runDir))
      : dir !== undefined
        ? basename(dir === '' ? '.' : basename(dir) === 'model' ? dirname(dir) : dir)
        : p.kind === 'endpoint'
          ? (p.model.split('/').at(-1) ?? 'endpoint')
          : 'model';
  return `eval-${name.replace(/[^A-Za-z0-9_.+-]/g, '_') || 'model'}-${timestamp(started)}.json`;
}

/**
 * Progress on stderr: a live line on a terminal, a line every tenth of a dataset otherwise. The
 * rate is seconds per problem so far, the same number the dataset's closing line gives at the end.
 */
function progressLogger(out: StatusLine, secondsPer: (seconds: number, problems: number) => string): EvalLogger & { done(): void } {
  let lastTenth = -1;
  return {
    info: (m) => out.line(m),
    warn: (m) => out.line(`warning: ${m}`),
    progress(p: EvalProgress) {
      const rate = p.done > 0 ? `, ${secondsPer(p.seconds, p.done)} s/problem` : '';
      const text = `${p.dataset} (${p.index + 1}/${p.datasets}): ${p.done}/${p.problems} problems${rate}`;
      const tenth = Math.floor((10 * p.done) / p.problems);
      if (p.done === 0) lastTenth = 0;
      const log = p.done > 0 && tenth > lastTenth && p.done < p.problems;
      if (log) lastTenth = tenth;
      out.status(p.done === p.problems ? '' : text, log);
    },
    done: () => out.status('', false),
  };
}
