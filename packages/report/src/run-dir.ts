/**
 * The run directory: what `rlvr train` writes and `rlvr report` reads, and any other trainer can write.
 *
 * ```
 * RUN_DIR/
 *   config.json     the resolved config (any JSON object)                       optional
 *   metrics.jsonl   one record per optimizer step                                required
 *   samples.jsonl   sample completions with their token weights                  optional
 *   evals.jsonl     held-out evaluations with per-problem correct counts         optional
 *   checkpoint-weights.jsonl  GRAIL weights of fixed evaluation rollouts, per checkpoint  optional
 * ```
 *
 * Each `.jsonl` file holds one JSON object per line; blank lines are skipped. A bad line stops
 * the read with a `ReportError('invalid_record')` naming the file, the 1-based line and the field.
 */
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AnswerSpansSchema, CoreError, readJsonl } from '@rlvr/core';
import { z } from 'zod';
import { ReportError } from './errors.js';

/** File names inside a run directory. */
export const RUN_FILES = {
  config: 'config.json',
  metrics: 'metrics.jsonl',
  samples: 'samples.jsonl',
  evals: 'evals.jsonl',
  checkpointWeights: 'checkpoint-weights.jsonl',
} as const;

/** `config.json`: the resolved configuration of the run, shown as it is (any JSON object). */
export const RunConfigSchema = z.record(z.string(), z.unknown());
export type RunConfig = z.infer<typeof RunConfigSchema>;

/**
 * One line of `metrics.jsonl`: the optimizer step and any numeric metrics, named by
 * `@rlvr/core`'s `METRIC` constants (`reward/mean`, `accuracy` on eval steps, `loss/policy`,
 * `kl/approx`, ...). Any metric may be absent on a step. `null` means "not a finite number"
 * (what `JSON.stringify` writes for NaN and Infinity) and is treated as absent.
 */
export const MetricsRecordSchema = z.object({ step: z.int().nonnegative() }).catchall(z.number().nullable());
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
    /** the question the rollout answers: for a routed one (`routed`), the question it was re-sampled on */
    prompt: z.string(),
    /** re-sampled on another question by a method's rollout stage (SCOPE-RL's scaffold); absent in older files */
    routed: z.boolean().optional(),
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

/**
 * One line of `checkpoint-weights.jsonl`: the GRAIL token weights (symmetry `both`, the first box)
 * of one of a fixed set of evaluation rollouts, recomputed with the parameters of checkpoint
 * `step` (the reference's `compute_checkpoint_stats.py`). `rollout` numbers the rollout within the
 * set (the same rollout at every step); `reasoning` is R, the tokens before its first `\boxed{`
 * (null without a box). Other keys (e.g. token ids) are ignored.
 */
export const CheckpointWeightRecordSchema = z
  .object({
    step: z.int().nonnegative(),
    rollout: z.int().nonnegative(),
    correct: z.boolean(),
    tokens: z.array(z.string()),
    weights: z.array(z.number()),
    spans: AnswerSpansSchema.nullable(),
    reasoning: z.int().nonnegative().nullable(),
  })
  .superRefine((s, ctx) => {
    if (s.weights.length !== s.tokens.length)
      ctx.addIssue({ code: 'custom', path: ['weights'], message: `has ${s.weights.length} entries but tokens has ${s.tokens.length}` });
    if (s.reasoning !== null && s.reasoning > s.tokens.length)
      ctx.addIssue({ code: 'custom', path: ['reasoning'], message: `is ${s.reasoning} but the completion has ${s.tokens.length} tokens` });
  });
export type CheckpointWeightRecord = z.infer<typeof CheckpointWeightRecordSchema>;

const ProblemMeanSchema = z.object({ mean: z.number().nullable(), se: z.number().nullable(), problems: z.int().nonnegative() });

/**
 * The Step-Quality metrics of a held-out evaluation whose problems have chains (the synthetic tasks): `@rlvr/eval`'s
 * `StepQuality`, where each is defined. Each `ProblemMean` is a mean over problems with its SE (null below 2 problems).
 */
const StepQualityRecordSchema = z.object({
  problems: z.int().min(1),
  samples: z.int().nonnegative(),
  usefulDensity: ProblemMeanSchema,
  noSteps: z.int().nonnegative(),
  wrong: z.int().nonnegative(),
  localised: ProblemMeanSchema,
  errorAt: ProblemMeanSchema,
  firstErrors: z.record(z.string(), z.int().nonnegative()),
  tokensPerSolved: z.object({
    value: z.number().nullable(),
    se: z.number().nullable(),
    tokens: z.number().nonnegative(),
    solved: z.int().nonnegative(),
  }),
});

/**
 * One line of `evals.jsonl`: a held-out evaluation of the policy at `step` (step 0 = the starting
 * checkpoint), `n` samples per problem. `correct[p]` counts problem p's correct samples, in the
 * same problem order on every line, so two evaluations compare problem by problem (paired).
 * Other keys are ignored.
 */
export const EvalRecordSchema = z
  .object({
    step: z.int().nonnegative(),
    /** mean over problems of correct / n */
    accuracy: z.number().min(0).max(1),
    /** unbiased pass@n (the fraction of problems with a correct sample) */
    passAtN: z.number().min(0).max(1),
    n: z.int().min(1),
    problems: z.int().min(1),
    /** [problems] correct samples (of n) per problem */
    correct: z.array(z.int().nonnegative()),
    greedyAccuracy: z.number().min(0).max(1).optional(),
    /** [problems] 1 where the greedy completion is correct */
    greedyCorrect: z.array(z.int().min(0).max(1)).optional(),
    /** the Step-Quality metrics, where the held-out problems have chains */
    stepQuality: StepQualityRecordSchema.optional(),
  })
  .superRefine((e, ctx) => {
    if (e.correct.length !== e.problems)
      ctx.addIssue({ code: 'custom', path: ['correct'], message: `has ${e.correct.length} counts for ${e.problems} problems` });
    const over = e.correct.findIndex((c) => c > e.n);
    if (over >= 0) ctx.addIssue({ code: 'custom', path: ['correct', over], message: `${e.correct[over]} correct of n = ${e.n} samples` });
    if (e.greedyCorrect !== undefined && e.greedyCorrect.length !== e.problems)
      ctx.addIssue({
        code: 'custom',
        path: ['greedyCorrect'],
        message: `has ${e.greedyCorrect.length} entries for ${e.problems} problems`,
      });
  });
export type EvalRecord = z.infer<typeof EvalRecordSchema>;
export type StepQualityRecord = z.infer<typeof StepQualityRecordSchema>;

/** Everything a report needs from one run directory. */
export interface RunData {
  dir: string;
  /** `null` when the run has no `config.json`. */
  config: RunConfig | null;
  /** In file order. */
  metrics: MetricsRecord[];
  /** `null` when the run has no `samples.jsonl` (as opposed to an empty one). */
  samples: SampleRecord[] | null;
  /** `null` when the run has no `evals.jsonl`. */
  evals: EvalRecord[] | null;
  /** `null` when the run has no `checkpoint-weights.jsonl`. */
  checkpointWeights?: CheckpointWeightRecord[] | null;
}

/** Read and validate a run directory. Throws `ReportError` (or core's `read_failed`) naming file, line and field. */
export async function readRunDir(dir: string): Promise<RunData> {
  await assertDirectory(dir);
  const configFile = join(dir, RUN_FILES.config);
  const config = (await exists(configFile)) ? await readConfig(configFile) : null;
  const metricsFile = join(dir, RUN_FILES.metrics);
  if (!(await exists(metricsFile)))
    throw new ReportError('missing_file', `run directory ${dir} has no ${RUN_FILES.metrics}`, { file: metricsFile });
  const metrics = await readRecords(metricsFile, MetricsRecordSchema);
  const samplesFile = join(dir, RUN_FILES.samples);
  const samples = (await exists(samplesFile)) ? await readRecords(samplesFile, SampleRecordSchema) : null;
  const evalsFile = join(dir, RUN_FILES.evals);
  const evals = (await exists(evalsFile)) ? await readRecords(evalsFile, EvalRecordSchema) : null;
  const weightsFile = join(dir, RUN_FILES.checkpointWeights);
  const checkpointWeights = (await exists(weightsFile)) ? await readRecords(weightsFile, CheckpointWeightRecordSchema) : null;
  return { dir, config, metrics, samples, evals, checkpointWeights };
}

/**
 * Read a JSON-lines file (core's `readJsonl`: streamed, blank lines skipped, a line that is not
 * JSON fails with its line), validating each record with `schema`.
 */
export async function readRecords<S extends z.ZodType>(file: string, schema: S): Promise<z.output<S>[]> {
  const out: z.output<S>[] = [];
  for await (const { line, value } of readJsonl(file)) out.push(parseRecord(value, schema, file, line));
  return out;
}

/** Validate one parsed record; `line` is 1-based and only used for the error message. */
export function parseRecord<S extends z.ZodType>(value: unknown, schema: S, file: string, line: number): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more issue(s))` : '';
  throw new ReportError(
    'invalid_record',
    `${field === undefined ? 'record: ' : ''}${issue.message}${more}`,
    { file, line, ...(field === undefined ? {} : { field }) },
    { cause: result.error },
  );
}

async function readConfig(file: string): Promise<RunConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new CoreError(
      'read_failed',
      `cannot read: ${(cause as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a directory' : (cause as Error).message}`,
      { file },
      { cause },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReportError('invalid_record', `not JSON: ${(err as Error).message}`, { file }, { cause: err });
  }
  const result = RunConfigSchema.safeParse(value);
  if (!result.success) throw new ReportError('invalid_record', 'must be a JSON object', { file }, { cause: result.error });
  return result.data;
}

async function assertDirectory(dir: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await stat(dir)).isDirectory();
  } catch (err) {
    throw new ReportError('missing_file', `run directory ${dir} does not exist`, { file: dir }, { cause: err });
  }
  if (!isDir) throw new ReportError('missing_file', `${dir} is not a directory`, { file: dir });
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuse a model directory that `rlvr pretrain` (RUN/checkpoint) or `rlvr train` (RUN/model) wrote for another task
 * than `config`'s, naming both: a run's task is its data file (`data FILE`) or its synthetic family (`arith` where none
 * is named), read from RUN/config.json. Nothing is checked where no such run config is there (the embedded warm-up).
 */
export function checkCheckpointTask(checkpoint: string, config: TaskFields): void {
  const file = join(dirname(checkpoint), RUN_FILES.config);
  let run: TaskFields & { command?: unknown };
  try {
    run = JSON.parse(readFileSync(file, 'utf8')) as typeof run;
  } catch {
    return; // no run config there, or not JSON: nothing recorded
  }
  const [theirs, ours] = [taskOf(run, config), taskOf(config, run)];
  if ((run.command === 'pretrain' || run.command === 'train') && theirs !== ours)
    throw new ReportError(
      'invalid_input',
      `checkpoint ${checkpoint} was made on task ${theirs} (${file}), not on this run's task ${ours}: ${
        String(run.family ?? 'arith') === String(config.family ?? 'arith') && run.data?.train === undefined
          ? `pass a --config with the checkpoint's longChain options (${file})`
          : `pass --family ${String(run.family ?? 'arith')} (or --config with its task)`
      }`,
      { field: 'checkpoint' },
    );
}

type TaskFields = { data?: { train?: unknown }; family?: unknown; longChain?: unknown };

/** A run's task in words: its data file, or its family; the long-chain family with its options where both sides record them. */
function taskOf(c: TaskFields, other: TaskFields): string {
  if (c.data?.train !== undefined) return `data ${String(c.data.train)}`;
  const family = String(c.family ?? 'arith');
  if (family !== 'long-chain' || !isRecord(c.longChain) || !isRecord(other.longChain)) return family;
  // only the options that differ: the words then say where the two tasks part
  const theirs = other.longChain;
  const differ = Object.keys(c.longChain)
    .filter((k) => JSON.stringify(c.longChain![k as never]) !== JSON.stringify(theirs[k]))
    .sort()
    .map((k) => `${k} ${JSON.stringify((c.longChain as Record<string, unknown>)[k])}`);
  return differ.length === 0 ? family : `${family} with ${differ.join(', ')}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
