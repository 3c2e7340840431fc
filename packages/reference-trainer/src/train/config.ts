import { fileURLToPath } from 'node:url';
import { formatZodIssues } from '@rlvr/core';
import { BACKEND_NAMES } from '@rlvr/policy';
import { PromptOptionsSchema, SyntheticOptionsSchema } from '@rlvr/rollout';
import { DatasetFormatSchema, LongChainOptionsSchema, TaskNameSchema } from '@rlvr/tasks';
import type { SignalPlan } from '@rlvr/saliency';
import { TrainerConfigSchema, configDiff } from '@rlvr/trainer';
import { z } from 'zod';
import { ReferenceTrainerError } from '../errors.js';

/** The warm-up checkpoint that ships with the package (`rlvr pretrain --seed 0`): the embedded default's policy. */
export const EMBEDDED_CHECKPOINT = fileURLToPath(new URL('../../assets/warmup', import.meta.url));

/** Held-out problems of the embedded task: the ones `rlvr pretrain` held out (same seed, count and difficulty). */
export const HELD_OUT_SEED = 0x5eed0e;

/** The easy synthetic arithmetic the warm-up checkpoint was trained on. */
const EASY = { minSteps: 1, maxSteps: 2, digits: 1 } as const;

/** Rollout sampling: P prompts x G completions per optimizer step. */
export const TrainRolloutSchema = z
  .object({
    /** prompts (groups) per step */
    prompts: z.number().int().min(1).max(4096).default(16),
    /** G: completions per prompt */
    groupSize: z.number().int().min(2).max(256).default(4),
    temperature: z.number().gt(0).max(4).default(1),
    topP: z.number().gt(0).max(1).default(1),
    maxNewTokens: z.number().int().min(1).max(4096).default(64),
    /** rows decoded together by the policy sampler */
    batchSize: z.number().int().min(1).max(4096).default(64),
  })
  .strict();

/**
 * Held-out evaluation, the paper's protocol on the synthetic task: `n` samples per problem at
 * `temperature` / `topP`; `accuracy` is the mean over problems of correct / n, `pass@n` the unbiased estimate.
 */
export const TrainEvalSchema = z
  .object({
    /** evaluate every N steps (and before the first and after the last); 0 = only before and after */
    every: z.number().int().min(0).default(50),
    problems: z.number().int().min(1).max(100_000).default(128),
    n: z.number().int().min(1).max(256).default(8),
    temperature: z.number().min(0).max(4).default(0.6),
    topP: z.number().gt(0).max(1).default(0.95),
    maxNewTokens: z.number().int().min(1).max(4096).default(64),
    /** also decode greedily and log `accuracy/greedy` */
    greedy: z.boolean().default(true),
    /** task stream of the held-out problems; training skips their questions */
    seed: z.number().int().min(0).max(0xffffffff).default(HELD_OUT_SEED),
    batchSize: z.number().int().min(1).max(4096).default(128),
    /**
     * held-out problems whose `rollout.groupSize` completions (sampled once) get their GRAIL weights
     * recomputed at every evaluation, into checkpoint-weights.jsonl (the report's U-shape over checkpoints); 0 = off
     */
    weightProblems: z.number().int().min(0).max(64).default(2),
    /** at every evaluation, `rlvr credit` on the policy of that moment: these estimators, `rollouts` rollouts of the task (RUN/credit/step-N) */
    credit: z
      .strictObject({ estimators: z.array(z.string().min(1)).min(1), rollouts: z.number().int().min(2).max(100_000).default(64) })
      .optional(),
  })
  .strict();

/**
 * Your own problems instead of the synthetic task: JSON-lines files read with a dataset preset
 * or a field mapping (`@rlvr/rollout`'s `loadTasks`). Held-out problems come from `eval` when
 * given, else `eval.problems` rows of `train` are held out (a seeded draw) and never trained on.
 */
export const TrainDataSchema = z
  .object({
    train: z.string().min(1),
    eval: z.string().min(1).optional(),
    /** a preset name (math500, gsm8k, deepmath, synthetic, ...; an alias such as aime24 is read as its preset) or a field mapping */
    format: DatasetFormatSchema.default('synthetic'),
  })
  .strict();

/** `rlvr train`: the RLVR loop. Defaults are the embedded default (README). */
export const TrainConfigSchema = z
  .object({
    /** seeds the data order, sampling and mini-batch shuffling: two runs with one seed see the same problems */
    seed: z.number().int().min(0).max(0xffffffff).default(0),
    /** RL steps (one batch of P x G rollouts and one optimizer update each) */
    steps: z.number().int().min(1).max(1_000_000).default(200),
    /** a registered advantage estimator, e.g. grpo, dr-grpo, grail, oar-g, rloo, or `baseline+weighting` */
    estimator: z.string().min(1).default('grail'),
    /** the estimator's options (checked by its own schema before any work) */
    estimatorConfig: z.record(z.string(), z.unknown()).default({}),
    /** modules that register estimators (paths relative to the working directory) */
    plugins: z.array(z.string().min(1)).default([]),
    /** policy checkpoint directory (config.json, model.safetensors, a tokenizer); default: the embedded warm-up */
    checkpoint: z.string().min(1).default(EMBEDDED_CHECKPOINT),
    /** the synthetic task family (when `data` is not given): `arith`, options in `task`, or `long-chain`, options in `longChain` */
    family: TaskNameSchema.default('arith'),
    /** the synthetic training problems of `arith` */
    task: SyntheticOptionsSchema.default(SyntheticOptionsSchema.parse(EASY)),
    longChain: LongChainOptionsSchema.default(LongChainOptionsSchema.parse({})),
    /** problems from your own files instead of the synthetic task */
    data: TrainDataSchema.optional(),
    /** prompt text around the question, rendered with the checkpoint's chat template (none: a plain User/Assistant layout) */
    prompt: PromptOptionsSchema.default(PromptOptionsSchema.parse({})),
    rollout: TrainRolloutSchema.default(TrainRolloutSchema.parse({})),
    /**
     * options of the saliency backends, by backend name (e.g. `{"grad-x-emb": {...}}`); `refresh`:
     * when the signals are computed in a step, `batch` (once, behaviour policy; default), `epoch`
     * or `minibatch` (again with the current parameters; the GRAIL reference: every micro-step);
     * `box`: the `\boxed{}` whose spans the saliency loss and the span overrides use, `first` (the
     * GRAIL reference's; default) or `last` (the one the reward grades)
     */
    saliency: z.record(z.string(), z.unknown()).default({}),
    /** the policy update (`@rlvr/trainer`); a decaying schedule without totalSteps decays over `steps` */
    trainer: TrainerConfigSchema.default(TrainerConfigSchema.parse({})),
    eval: TrainEvalSchema.default(TrainEvalSchema.parse({})),
    /** difficulty of the held-out problems (default: the training task) */
    evalTask: SyntheticOptionsSchema.optional(),
    /** evaluate on a validation split of the training problems, never trained on, instead of the held-out set (rlvr compare --tune) */
    validation: z.strictObject({ problems: z.number().int().min(1).max(100_000) }).optional(),
    /** checkpoint every N steps (and after the last); 0 = only after the last */
    checkpointEvery: z.number().int().min(0).default(20),
    keepCheckpoints: z.number().int().min(1).max(1000).default(2),
    /** write `samples` rollouts to samples.jsonl every `sampleEvery` steps (0 = never) */
    sampleEvery: z.number().int().min(0).default(10),
    samples: z.number().int().min(0).max(4096).default(8),
    backend: z.enum(['auto', ...BACKEND_NAMES]).default('auto'),
    /**
     * policy worker threads computing the update's gradients data-parallel (`auto`: the machine's
     * available parallelism); 1 runs everything in this thread, as before workers existed. The
     * result depends on the count at the level of float rounding, like the backend: a resume may
     * change it.
     */
    workers: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
  })
  .strict();
export type TrainConfig = z.output<typeof TrainConfigSchema>;
export type TrainConfigInput = z.input<typeof TrainConfigSchema>;

/**
 * `OUT/config.json` of a train run: the resolved train config (every default filled in) with
 * `command: "train"`, `estimatorConfig` as the estimator's own schema resolved it (its
 * defaults, e.g. GRAIL's `wMin`, included) and `saliency` as the signal plan resolved it (`refresh`
 * and the options of every backend the run uses). It is a valid `--config` again, and what
 * `--resume` continues from.
 */
export const TrainRunConfigSchema = TrainConfigSchema.extend({ command: z.literal('train') }).strict();
export type TrainRunConfig = z.output<typeof TrainRunConfigSchema>;

/** The run-directory record of `config` with the estimator's resolved options and, given its signal plan, the resolved saliency options. */
export function runConfigOf(
  config: TrainConfig,
  resolvedEstimatorConfig: Readonly<Record<string, unknown>>,
  signals?: Pick<SignalPlan, 'refresh' | 'box' | 'options'>,
): TrainRunConfig {
  const saliency = signals === undefined ? config.saliency : { refresh: signals.refresh, box: signals.box, ...signals.options };
  return { command: 'train', ...config, estimatorConfig: { ...resolvedEstimatorConfig }, saliency };
}

/**
 * What a checkpoint must match to be resumed: everything that shapes the trajectory, with the
 * estimator's options resolved (so `{}` and GRAIL's spelled-out defaults agree). `steps` (to
 * extend a run), the checkpoint and sample cadence, the backend, the worker count and plugin
 * paths may change (backend and workers move the numbers by float rounding only).
 */
export function resumeKey(config: TrainConfig): Record<string, unknown> {
  const {
    steps: _s,
    checkpointEvery: _c,
    keepCheckpoints: _k,
    sampleEvery: _e,
    samples: _n,
    backend: _b,
    workers: _w,
    plugins: _p,
    ...rest
  } = config;
  const { command: _command, ...key } = rest as typeof rest & { command?: unknown };
  return key;
}

/** The embedded default's RL update: AdamW at a constant 5e-5 (1e-4 already degraded held-out accuracy), GRAIL-reference clipping, no KL. */
const DEFAULT_TRAINER = { schedule: { type: 'constant', lr: 5e-5 } } as const;

/**
 * Validate a train config (a run directory's `config.json`, with `command: "train"`, is one too).
 * Unknown keys and bad values are named (with `file` when given) in one
 * `ReferenceTrainerError('invalid_config')`. The trainer's seed defaults to the run seed, its
 * `maxCompletionLength` to `rollout.maxNewTokens`, and a linear or cosine schedule without
 * `totalSteps` decays over `steps`.
 */
export function parseTrainConfig(input: unknown, file?: string): TrainConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ReferenceTrainerError('invalid_config', 'invalid train config: must be a JSON object', file === undefined ? {} : { file });
  }
  // `$schema` points an editor at the JSON Schema; a run directory's config.json is a valid --config: its `command` says what wrote it.
  const { command, $schema: _schema, ...raw } = input as Record<string, unknown>;
  if (command !== undefined && command !== 'train') {
    throw new ReferenceTrainerError('invalid_config', `invalid train config: written by rlvr ${JSON.stringify(command)}, not rlvr train`, {
      ...(file === undefined ? {} : { file }),
      field: 'command',
    });
  }
  const patched: Record<string, unknown> = { ...raw };
  const trainer = isObject(raw.trainer)
    ? { ...DEFAULT_TRAINER, ...raw.trainer }
    : raw.trainer === undefined
      ? { ...DEFAULT_TRAINER }
      : raw.trainer;
  if (isObject(trainer)) {
    if (!('seed' in trainer) && typeof raw.seed === 'number') trainer.seed = raw.seed;
    if (!('maxCompletionLength' in trainer)) {
      const r = raw.rollout;
      trainer.maxCompletionLength =
        isObject(r) && typeof r.maxNewTokens === 'number' ? r.maxNewTokens : TrainRolloutSchema.parse({}).maxNewTokens;
    }
    const s = trainer.schedule;
    if (isObject(s) && s.type !== undefined && s.type !== 'constant' && !('totalSteps' in s)) {
      trainer.schedule = { ...s, totalSteps: typeof raw.steps === 'number' ? raw.steps : TrainConfigSchema.shape.steps.parse(undefined) };
    }
  }
  patched.trainer = trainer;
  const result = TrainConfigSchema.safeParse(patched);
  if (result.success) return result.data;
  throw new ReferenceTrainerError(
    'invalid_config',
    `invalid train config: ${formatZodIssues(result.error.issues, patched, TrainConfigSchema)}`,
    file === undefined ? {} : { file },
    { cause: result.error },
  );
}

/**
 * How `given` differs from a run's own config in what shapes the trajectory (`resumeKey`): one
 * `path: the run has X, given Y` per differing leaf; empty when they agree.
 */
export function resumeDifferences(run: TrainConfig, given: TrainConfig): string[] {
  const a = resumeKey(run);
  const b = resumeKey(given);
  const at = (o: unknown, path: string) => path.split('.').reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), o);
  const show = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));
  return configDiff(a, b).map((p) => `${p}: the run has ${show(at(a, p))}, given ${show(at(b, p))}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
