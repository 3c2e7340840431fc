import { basename } from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { BACKEND_NAMES } from '@rlvr/policy';
import { FieldMappingSchema, PresetNameSchema, presetLabel } from '@rlvr/tasks';
import { EvaluationError } from './errors.js';

/** The longest question `rlvr eval` tokenizes by default, in characters (benchmark problems are a few thousand). */
export const DEFAULT_MAX_QUESTION_CHARS = 100_000;

/**
 * A dataset: a JSON-lines file and its field layout, a preset or a field mapping (the same
 * layouts `rlvr train` reads in `data.format`; exactly one of `preset` and `fields`).
 */
const DatasetSchema = z
  .object({
    /** a JSON-lines file */
    file: z.string().min(1),
    /** its field layout: a `DATASET_PRESETS` name of `@rlvr/tasks` or an alias (`aime24`), read as the preset */
    preset: PresetNameSchema.optional(),
    /** or its fields: `{question, answer, answerFormat?, id?}` (`@rlvr/rollout`'s `FieldMappingSchema`) */
    fields: FieldMappingSchema.optional(),
    /** the name in the table and JSON (default: the preset's benchmark name, or the file's name, made unique) */
    name: z.string().min(1).optional(),
  })
  .strict()
  .refine((d) => (d.preset === undefined) !== (d.fields === undefined), {
    message: 'give exactly one of preset (a layout name) and fields (a field mapping)',
    path: ['preset'],
  });
export type EvalDataset = z.output<typeof DatasetSchema>;
export type EvalDatasetInput = z.input<typeof DatasetSchema>;

/**
 * What `runEval` evaluates and how. Exactly one of `model` (a local model directory) and
 * `endpoint` (an OpenAI-compatible base URL) is given. Defaults follow the paper's protocol:
 * n = 3 samples per problem at temperature 0.6, top-p 0.95, top-k 20, 8192 new tokens at most.
 */
export const EvalOptionsSchema = z
  .object({
    /** a `@rlvr/policy` model directory (config.json, model.safetensors, tokenizer) */
    model: z.string().min(1).optional(),
    /** an OpenAI-compatible base URL (vLLM, `rlvr-serve`), e.g. `http://127.0.0.1:8000/v1` */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** the served model's name (default: the first id of GET {endpoint}/models) */
    modelName: z.string().min(1).optional(),
    /** sent as `Authorization: Bearer ...` */
    apiKey: z.string().min(1).optional(),
    /** endpoint only: /chat/completions with the messages (the server applies the model's chat template) */
    chat: z.boolean().default(false),
    /** endpoint only: requests in flight at once */
    concurrency: z.number().int().min(1).max(1024).default(8),
    /** endpoint only: receive each response as a server-sent event stream, read as it arrives (no proxy or timeout cuts a long generation) */
    stream: z.boolean().default(false),
    /**
     * endpoint only: ask for every sampled token id with its log-prob (`logprobs`,
     * `return_tokens_as_token_ids`), as RL clients do; by default only the text comes back and
     * the token counts are the server's `usage.completion_tokens` (the same numbers, several
     * times fewer bytes)
     */
    tokenIds: z.boolean().default(false),
    datasets: z.array(DatasetSchema).min(1),
    /** samples per problem */
    n: z.number().int().min(1).max(1024).default(3),
    temperature: z.number().min(0).max(10).default(0.6),
    topP: z.number().gt(0).max(1).default(0.95),
    /** 0 = off */
    topK: z.number().int().min(0).default(20),
    /** new tokens per sample (default: 8192, less where the model's context is shorter) */
    maxTokens: z.number().int().min(1).optional(),
    /** the first N problems of each dataset */
    limit: z.number().int().min(1).optional(),
    /** seeds every problem's samples: the same seed gives the same samples (local model; servers that honour `seed`) */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .default(0),
    /**
     * how prompts are rendered: `model` = the model's chat template (a local directory's
     * tokenizer_config.json, else ChatML when the tokenizer has its tokens, else plain; an
     * endpoint's through its POST /tokenize, the ids then sent to /completions); `plain` =
     * User:/Assistant: blocks; `chatml` = Qwen's layout. Default `model` (an endpoint without
     * /tokenize: `plain`, with a warning), so both paths give the same prompts.
     */
    template: z.enum(['model', 'plain', 'chatml']).optional(),
    /** local model only: rows decoded together */
    batchSize: z.number().int().min(1).max(4096).default(16),
    /** local model only: the tfjs backend */
    backend: z.enum(['auto', ...BACKEND_NAMES]).default('auto'),
    /** local model only: policy worker threads decoding in parallel (`auto`: the available parallelism; 1: this thread only) */
    workers: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
    /** a longer question fails the evaluation before any work, naming its file and line */
    maxQuestionChars: z.number().int().min(1).default(DEFAULT_MAX_QUESTION_CHARS),
  })
  .strict()
  .superRefine((o, ctx) => {
    if ((o.model === undefined) === (o.endpoint === undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'give exactly one of model (a local model directory) and endpoint (a server URL)',
        path: ['model'],
      });
    if (o.endpoint === undefined) {
      for (const k of ['modelName', 'apiKey'] as const)
        if (o[k] !== undefined) ctx.addIssue({ code: 'custom', message: 'only with endpoint', path: [k] });
      for (const k of ['chat', 'stream', 'tokenIds'] as const)
        if (o[k]) ctx.addIssue({ code: 'custom', message: 'only with endpoint', path: [k] });
    } else {
      if (o.chat && o.template !== undefined)
        ctx.addIssue({ code: 'custom', message: 'with chat the server applies its own template', path: ['template'] });
    }
  });
export type EvalOptions = z.output<typeof EvalOptionsSchema>;
export type EvalOptionsInput = z.input<typeof EvalOptionsSchema>;

/** Parse eval options; a bad field throws `EvaluationError('invalid_options')` naming it. */
export function parseEvalOptions(input: unknown): EvalOptions {
  const r = EvalOptionsSchema.safeParse(input);
  if (r.success) return r.data;
  throw new EvaluationError('invalid_options', `invalid eval options: ${formatZodIssues(r.error.issues, input)}`, {}, { cause: r.error });
}

/** `aime.jsonl` -> `aime` */
const stem = (file: string): string => basename(file).replace(/\.jsonl?$/i, '');

/**
 * Table names for the datasets: the given name, else the preset's benchmark name (a field mapping:
 * the file's name); repeats get the file name, then a number.
 */
export function datasetNames(datasets: readonly EvalDataset[]): string[] {
  const base = datasets.map((d) => d.name ?? (d.preset !== undefined ? presetLabel(d.preset) : stem(d.file)));
  const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;
  const withFile = base.map((b, i) =>
    count(base, b) > 1 && datasets[i]!.name === undefined && datasets[i]!.preset !== undefined ? `${b}:${stem(datasets[i]!.file)}` : b,
  );
  return withFile.map((b, i) => (count(withFile, b) > 1 ? `${b}#${withFile.slice(0, i + 1).filter((y) => y === b).length}` : b));
}
