import { basename } from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { BACKEND_NAMES } from '@rlvr/policy';
import { DATASET_PRESETS } from '@rlvr/rollout';
import type { DatasetPreset } from '@rlvr/rollout';
import { ReferenceTrainerError } from '../errors.js';

/**
 * The benchmark names of `rlvr eval --preset` and the `@rlvr/rollout` field layouts they read
 * with. The preset names of `DATASET_PRESETS` themselves (`aime`, `minerva_math`, `gsm8k`, ...)
 * are accepted too.
 */
export const EVAL_PRESETS = {
  math500: 'math500',
  aime24: 'aime',
  amc23: 'amc',
  minerva: 'minerva_math',
  college: 'college_math',
  olympiad: 'olympiadbench',
  synthetic: 'synthetic',
} as const satisfies Record<string, DatasetPreset>;
export type EvalPresetName = keyof typeof EVAL_PRESETS;

/** The `DATASET_PRESETS` key a CLI preset name stands for; undefined when it names none. */
export function resolvePreset(name: string): DatasetPreset | undefined {
  if (Object.hasOwn(EVAL_PRESETS, name)) return EVAL_PRESETS[name as EvalPresetName];
  if (Object.hasOwn(DATASET_PRESETS, name)) return name as DatasetPreset;
  return undefined;
}

/** File-name patterns of the usual benchmark files, most specific first. */
const FILE_PATTERNS: readonly [RegExp, DatasetPreset][] = [
  [/math[-_ ]?500|math[-_]oai/i, 'math500'],
  [/aime/i, 'aime'],
  [/amc/i, 'amc'],
  [/minerva/i, 'minerva_math'],
  [/college/i, 'college_math'],
  [/olympiad/i, 'olympiadbench'],
  [/gsm8k/i, 'gsm8k'],
  [/deepmath/i, 'deepmath'],
  [/synth/i, 'synthetic'],
];

/**
 * Guess a dataset's preset from its path (`AIME24/test.jsonl` -> aime, `minerva-math.jsonl` ->
 * minerva_math): the file name first, then the directory holding it (no further up: a home
 * directory's name says nothing about the data). Undefined when nothing matches.
 */
export function guessPreset(file: string): DatasetPreset | undefined {
  const parts = file.split(/[\\/]+/).filter((p) => p !== '');
  for (const part of parts.slice(-2).reverse()) {
    for (const [re, preset] of FILE_PATTERNS) if (re.test(part)) return preset;
  }
  return undefined;
}

/** The table name of a preset: the benchmark name (aime24) where there is one, else the preset. */
export function presetLabel(preset: DatasetPreset): string {
  const hit = Object.entries(EVAL_PRESETS).find(([, p]) => p === preset);
  return hit === undefined ? preset : hit[0];
}

const DatasetSchema = z
  .object({
    /** a JSON-lines file */
    file: z.string().min(1),
    /** its field layout (a `DATASET_PRESETS` key) */
    preset: z.enum(Object.keys(DATASET_PRESETS) as [DatasetPreset, ...DatasetPreset[]]),
    /** the name in the table and JSON (default: the preset's benchmark name, made unique) */
    name: z.string().min(1).optional(),
  })
  .strict();
export type EvalDataset = z.output<typeof DatasetSchema>;

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
    seed: z.number().int().min(0).max(2 ** 32 - 1).default(0),
    /**
     * how prompts are rendered: `model` = the model directory's chat template (tokenizer_config.json,
     * else ChatML when the tokenizer has its tokens, else plain); `plain` = User:/Assistant: blocks;
     * `chatml` = Qwen's layout. For an endpoint (without `chat`) the text is rendered here and sent
     * to /completions; `model` is then not available. Default: `model` locally, `plain` for an endpoint.
     */
    template: z.enum(['model', 'plain', 'chatml']).optional(),
    /** local model only: rows decoded together */
    batchSize: z.number().int().min(1).max(4096).default(16),
    /** local model only: the tfjs backend */
    backend: z.enum(['auto', ...BACKEND_NAMES]).default('auto'),
  })
  .strict()
  .superRefine((o, ctx) => {
    if ((o.model === undefined) === (o.endpoint === undefined)) ctx.addIssue({ code: 'custom', message: 'give exactly one of model (a local model directory) and endpoint (a server URL)', path: ['model'] });
    if (o.endpoint === undefined) {
      for (const k of ['modelName', 'apiKey'] as const) if (o[k] !== undefined) ctx.addIssue({ code: 'custom', message: 'only with endpoint', path: [k] });
      if (o.chat) ctx.addIssue({ code: 'custom', message: 'only with endpoint', path: ['chat'] });
    } else {
      if (o.template === 'model') ctx.addIssue({ code: 'custom', message: '"model" needs a local model directory; with an endpoint use chat (the server applies its template), plain or chatml', path: ['template'] });
      if (o.chat && o.template !== undefined) ctx.addIssue({ code: 'custom', message: 'with chat the server applies its own template', path: ['template'] });
    }
  });
export type EvalOptions = z.output<typeof EvalOptionsSchema>;
export type EvalOptionsInput = z.input<typeof EvalOptionsSchema>;

/** Parse eval options; a bad field throws `ReferenceTrainerError('invalid_options')` naming it. */
export function parseEvalOptions(input: unknown): EvalOptions {
  const r = EvalOptionsSchema.safeParse(input);
  if (r.success) return r.data;
  throw new ReferenceTrainerError('invalid_options', `invalid eval options: ${formatZodIssues(r.error.issues, input)}`, {}, { cause: r.error });
}

/** Table names for the datasets: the given name, else the preset's benchmark name; repeats get the file name, then a number. */
export function datasetNames(datasets: readonly EvalDataset[]): string[] {
  const base = datasets.map((d) => d.name ?? presetLabel(d.preset));
  const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;
  const withFile = base.map((b, i) => (count(base, b) > 1 && datasets[i]!.name === undefined ? `${b}:${basename(datasets[i]!.file).replace(/\.jsonl?$/i, '')}` : b));
  return withFile.map((b, i) => (count(withFile, b) > 1 ? `${b}#${withFile.slice(0, i + 1).filter((y) => y === b).length}` : b));
}
