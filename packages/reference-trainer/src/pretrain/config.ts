import { formatZodIssues } from '@rlvr/core';
import { BACKEND_NAMES } from '@rlvr/policy';
import { SyntheticOptionsSchema } from '@rlvr/rollout';
import { LongChainOptionsSchema, TaskNameSchema } from '@rlvr/tasks';
import { AdamWConfigSchema, LrScheduleSchema } from '@rlvr/trainer';
import { z } from 'zod';
import { ReferenceTrainerError } from '../errors.js';

/** The tiny Qwen3 trained from scratch (Hugging Face `config.json` names; the vocabulary comes from the pruned tokenizer). */
export const PretrainModelSchema = z
  .object({
    hidden_size: z.number().int().min(8).max(1024).default(96),
    intermediate_size: z.number().int().min(8).max(4096).default(256),
    num_hidden_layers: z.number().int().min(1).max(24).default(3),
    num_attention_heads: z.number().int().min(1).max(32).default(4),
    num_key_value_heads: z.number().int().min(1).max(32).default(2),
    head_dim: z.number().int().min(4).max(256).default(24),
    max_position_embeddings: z.number().int().min(32).max(32768).default(256),
    tie_word_embeddings: z.boolean().default(true),
  })
  .strict()
  .refine((m) => m.num_attention_heads % m.num_key_value_heads === 0, {
    message: 'num_attention_heads must be a multiple of num_key_value_heads',
    path: ['num_key_value_heads'],
  });

/** Greedy accuracy on held-out synthetic problems (never trained on: training skips their questions). */
export const PretrainEvalSchema = z
  .object({
    /** evaluate every N optimizer steps (and after the last); 0 = only after the last */
    every: z.number().int().min(0).default(40),
    /** held-out problems */
    problems: z.number().int().min(1).max(10000).default(128),
    /** task stream of the held-out problems (the training stream is the run seed) */
    seed: z.number().int().min(0).max(0xffffffff).default(0x5eed0e),
    maxNewTokens: z.number().int().min(1).max(4096).default(64),
    /** rows decoded together */
    batchSize: z.number().int().min(1).max(1024).default(64),
    /** difficulty of the held-out problems (default: the training distribution) */
    synthetic: SyntheticOptionsSchema.optional(),
  })
  .strict();

/** Default optimizer steps: on 2 shared cores (wasm) about 3-4 minutes, held-out easy accuracy about 40-50% (README). */
const DEFAULT_STEPS = 160;

/** `rlvr pretrain`: supervised warm-up of a tiny policy on synthetic worked solutions. */
export const PretrainConfigSchema = z
  .object({
    seed: z.number().int().min(0).max(0xffffffff).default(0),
    /** optimizer steps */
    steps: z.number().int().min(1).max(1_000_000).default(DEFAULT_STEPS),
    /** problems per optimizer step */
    batchSize: z.number().int().min(1).max(4096).default(32),
    /** the task family: `arith` (the short problems, options in `synthetic`) or `long-chain` (options in `longChain`) */
    family: TaskNameSchema.default('arith'),
    /** the long-chain task's options (`family: "long-chain"`; training and held-out problems alike) */
    longChain: LongChainOptionsSchema.default(LongChainOptionsSchema.parse({})),
    /** the training problems of `arith` (easy: 1-2 add/subtract steps, one-digit amounts) */
    synthetic: SyntheticOptionsSchema.default(SyntheticOptionsSchema.parse({ minSteps: 1, maxSteps: 2, digits: 1 })),
    /** problems whose prompt and solution texts define the pruned vocabulary */
    vocabProblems: z.number().int().min(1).max(1_000_000).default(4000),
    model: PretrainModelSchema.default(PretrainModelSchema.parse({})),
    schedule: LrScheduleSchema.default(
      LrScheduleSchema.parse({ type: 'cosine', lr: 3e-3, warmupSteps: 30, totalSteps: DEFAULT_STEPS, minLrRatio: 0.1 }),
    ),
    optimizer: AdamWConfigSchema.default(AdamWConfigSchema.parse({ beta2: 0.98, weightDecay: 0.01 })),
    /** clip the global gradient norm to this (null = no clipping) */
    maxGradNorm: z.number().positive().nullable().default(1),
    eval: PretrainEvalSchema.default(PretrainEvalSchema.parse({})),
    /** stderr progress line every N steps (0 = none) */
    logEvery: z.number().int().min(0).default(20),
    backend: z.enum(['auto', ...BACKEND_NAMES]).default('wasm'),
    /** weights' dtype in the checkpoint */
    dtype: z.enum(['F32', 'BF16', 'F16']).default('F32'),
  })
  .strict();
export type PretrainConfig = z.output<typeof PretrainConfigSchema>;
export type PretrainConfigInput = z.input<typeof PretrainConfigSchema>;

/**
 * Validate a pretrain config; a cosine or linear schedule without `totalSteps` decays over `steps`.
 * Throws `ReferenceTrainerError('invalid_config')` naming every bad field (and `file` when given).
 */
export function parsePretrainConfig(input: unknown, file?: string): PretrainConfig {
  // `$schema` points an editor at the JSON Schema
  const { $schema: _schema, ...raw } = (input ?? {}) as Record<string, unknown>;
  let patched: unknown = raw;
  // Decay over the run's own steps unless the schedule says otherwise (so `--steps` alone is enough).
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const steps = typeof raw.steps === 'number' ? raw.steps : DEFAULT_STEPS;
    const s = raw.schedule;
    if (s !== null && typeof s === 'object' && !Array.isArray(s) && !('totalSteps' in s))
      patched = { ...raw, schedule: { ...s, totalSteps: steps } };
    else if (s === undefined)
      patched = { ...raw, schedule: { type: 'cosine', lr: 3e-3, warmupSteps: Math.min(30, steps), totalSteps: steps, minLrRatio: 0.1 } };
  }
  const result = PretrainConfigSchema.safeParse(patched);
  if (result.success) return result.data;
  throw new ReferenceTrainerError(
    'invalid_config',
    `invalid pretrain config: ${formatZodIssues(result.error.issues, patched, PretrainConfigSchema)}`,
    file === undefined ? {} : { file },
    { cause: result.error },
  );
}
