/**
 * The run directory: what `rlvr train` writes and `rlvr report` reads.
 *
 * ```
 * RUN_DIR/
 *   config.json     the resolved config (any JSON object)            optional
 *   metrics.jsonl   one record per optimizer step                     required
 *   samples.jsonl   sample completions with their token weights       optional
 * ```
 *
 * Each `.jsonl` file holds one JSON object per line; blank lines are skipped.
 * A bad line stops the read with a `ReferenceTrainerError('invalid_record')`
 * naming the file, the 1-based line and the field.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AnswerSpansSchema } from '@rlvr/core';
import { z } from 'zod';
import { ReferenceTrainerError } from './errors.js';

/** File names inside a run directory. */
export const RUN_FILES = {
  config: 'config.json',
  metrics: 'metrics.jsonl',
  samples: 'samples.jsonl',
} as const;

/** `config.json`: the resolved configuration of the run, any JSON object. */
export const RunConfigSchema = z.record(z.string(), z.unknown());
export type RunConfig = z.infer<typeof RunConfigSchema>;

/**
 * One line of `metrics.jsonl`: the optimizer step and any numeric metrics,
 * e.g. `reward/mean`, `accuracy` (eval steps only), `loss/policy`, `kl/approx`.
 * Any metric may be absent on a step. `null` means "not a finite number"
 * (what `JSON.stringify` writes for NaN and Infinity) and is treated as absent.
 */
export const MetricsRecordSchema = z
  .object({ step: z.int().nonnegative() })
  .catchall(z.number().nullable());
export type MetricsRecord = z.infer<typeof MetricsRecordSchema>;

/**
 * One line of `samples.jsonl`: a completion with its per-token weights.
 * `tokens[t]` is the decoded text of completion token t; `weights[t]` its weight
 * (the factor on the sequence advantage; 1 = unchanged). `spans` are token
 * ranges `[start, end)` of the final answer's opening delimiter, content and
 * closing delimiter, or `null` when the completion has no answer. Other keys are ignored.
 */
export const SampleRecordSchema = z
  .object({
    step: z.int().nonnegative(),
    group: z.int().nonnegative(),
    reward: z.number(),
    correct: z.boolean(),
    advantage: z.number(),
    prompt: z.string(),
    tokens: z.array(z.string()),
    weights: z.array(z.number()),
    spans: AnswerSpansSchema.nullable(),
  })
  .superRefine((s, ctx) => {
    if (s.weights.length !== s.tokens.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['weights'],
        message: `has ${s.weights.length} entries but tokens has ${s.tokens.length}; they must be the same length`,
      });
    }
    if (s.spans !== null && s.spans.close[1] > s.tokens.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['spans', 'close'],
        message: `ends at token ${s.spans.close[1]} but the completion has ${s.tokens.length} tokens`,
      });
    }
  });
export type SampleRecord = z.infer<typeof SampleRecordSchema>;

/** Everything a report needs from one run directory. */
export interface RunData {
  dir: string;
  /** `null` when the run has no `config.json`. */
  config: RunConfig | null;
  /** In file order. */
  metrics: MetricsRecord[];
  /** `null` when the run has no `samples.jsonl` (as opposed to an empty one). */
  samples: SampleRecord[] | null;
}

/** Read and validate a run directory. Throws `ReferenceTrainerError` naming file, line and field. */
export async function readRunDir(dir: string): Promise<RunData> {
  await assertDirectory(dir);
  const configFile = join(dir, RUN_FILES.config);
  const config = (await exists(configFile)) ? await readConfig(configFile) : null;
  const metricsFile = join(dir, RUN_FILES.metrics);
  if (!(await exists(metricsFile))) {
    throw new ReferenceTrainerError('missing_file', `run directory ${dir} has no ${RUN_FILES.metrics}`, { file: metricsFile });
  }
  const metrics = await readJsonl(metricsFile, MetricsRecordSchema);
  const samplesFile = join(dir, RUN_FILES.samples);
  const samples = (await exists(samplesFile)) ? await readJsonl(samplesFile, SampleRecordSchema) : null;
  return { dir, config, metrics, samples };
}

/**
 * Read a JSON-lines file, validating each non-blank line with `schema`.
 * Streams the file, so memory holds the parsed records only.
 */
export async function readJsonl<S extends z.ZodType>(file: string, schema: S): Promise<z.output<S>[]> {
  const out: z.output<S>[] = [];
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() === '') continue;
      out.push(parseRecord(text, schema, file, line));
    }
  } catch (err) {
    if (err instanceof ReferenceTrainerError) throw err;
    throw new ReferenceTrainerError('read_failed', `cannot read: ${(err as Error).message}`, { file }, { cause: err });
  } finally {
    lines.close();
  }
  return out;
}

/** Parse one JSONL line; `line` is 1-based and only used for the error message. */
export function parseRecord<S extends z.ZodType>(text: string, schema: S, file: string, line: number): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReferenceTrainerError('invalid_record', `not valid JSON (${(err as Error).message})`, { file, line }, { cause: err });
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more issue(s))` : '';
  throw new ReferenceTrainerError('invalid_record', `${field === undefined ? 'record: ' : ''}${issue.message}${more}`, { file, line, ...(field === undefined ? {} : { field }) }, { cause: result.error });
}

async function readConfig(file: string): Promise<RunConfig> {
  const text = await readFile(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReferenceTrainerError('invalid_record', `not valid JSON (${(err as Error).message})`, { file }, { cause: err });
  }
  const result = RunConfigSchema.safeParse(value);
  if (!result.success) {
    throw new ReferenceTrainerError('invalid_record', 'must be a JSON object', { file }, { cause: result.error });
  }
  return result.data;
}

async function assertDirectory(dir: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await stat(dir)).isDirectory();
  } catch (err) {
    throw new ReferenceTrainerError('missing_file', `run directory ${dir} does not exist`, { file: dir }, { cause: err });
  }
  if (!isDir) throw new ReferenceTrainerError('missing_file', `${dir} is not a directory`, { file: dir });
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
