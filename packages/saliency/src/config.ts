import { z } from 'zod';
import { SIGNAL_NAMES, parseConfig } from '@rlvr/core';
import { SaliencyError } from './errors.js';

/** Options every model-running backend shares. Defaults follow the GRAIL reference code. */
const common = {
  /**
   * Answer tokens the loss covers: `boxed` the whole `\boxed{...}` span (open, content, close) as
   * the reference code does; `content` the answer only.
   */
  answerSpan: z.enum(['boxed', 'content']).default('boxed'),
  /** Input position a token's score is read from: `previous` (reference code: P - 1 + j) or `own` (P + j). */
  alignment: z.enum(['previous', 'own']).default('previous'),
  /** Divide the logits by this before the softmax (the sampling temperature). */
  temperature: z.number().positive().default(1),
  /** Most padded tokens (rows x (P + C)) in one forward pass; rollouts are micro-batched under it. */
  tokenBudget: z.number().int().positive().default(8192),
  /** Token id written into padding columns (never attended to; any valid id works). */
  padId: z.number().int().nonnegative().default(0),
  /** Most logits held at once by the chunked log-softmax (elements). */
  maxChunkElements: z.number().int().positive().default(2 ** 23),
};

/** `grad-x-emb` (GRAIL): s_t = || dL_ans/de_t (x) e_t ||_2 with L_ans = -sum of the answer tokens' log-probs. */
export const GradXEmbConfigSchema = z.strictObject({ ...common });
export type GradXEmbConfig = z.output<typeof GradXEmbConfigSchema>;
export type GradXEmbConfigInput = z.input<typeof GradXEmbConfigSchema>;

/**
 * `noisy-kl` (OAR-G): score_t = | sum_d g_{t,d} e~_{t,d} | with g the gradient of
 * KL(p0 || p_noisy) w.r.t. the noisy embeddings e~. The reference code does not divide its logits
 * by the temperature (moot at 1).
 */
export const NoisyKlConfigSchema = z.strictObject({
  ...common,
  /** Standard deviation of the Gaussian noise added to the scored embeddings. */
  noiseStd: z.number().nonnegative().default(1e-3),
  /** Seed of the noise: the same seed gives the same noise whatever the micro-batching. */
  seed: z.number().int().default(0),
  /**
   * A fixed noise tensor `[totalTokens * D]` (already scaled; `noiseStd` and `seed` are then
   * unused): row t is added to the embedding that scores completion token t. For tests and
   * cross-framework checks.
   */
  noise: z.custom<Float32Array>((v) => v instanceof Float32Array, 'must be a Float32Array').optional(),
});
export type NoisyKlConfig = z.output<typeof NoisyKlConfigSchema>;
export type NoisyKlConfigInput = z.input<typeof NoisyKlConfigSchema>;

/**
 * `perturbation`: score_t = KL(p0 || p_t), p_t the answer distribution with the embedding at the
 * scored position replaced. One forward pass per scored token (batched).
 */
export const PerturbationConfigSchema = z.strictObject({
  ...common,
  /** The perturbation reads a token's own position by default. */
  alignment: z.enum(['own', 'previous']).default('own'),
  /** What replaces the embedding: a zero vector, or the embedding of a token id (pad or mask token). */
  replacement: z.union([z.literal('zero'), z.number().int().nonnegative()]).default('zero'),
  /**
   * Score only the last `window` tokens that can influence the answer (those closest to it);
   * earlier tokens get 0. null scores them all (T forward passes per rollout).
   */
  window: z.number().int().positive().nullable().default(null),
});
export type PerturbationConfig = z.output<typeof PerturbationConfigSchema>;
export type PerturbationConfigInput = z.input<typeof PerturbationConfigSchema>;

/** `precomputed`: scores made elsewhere (another framework), checked and placed in the batch layout. */
export const PrecomputedConfigSchema = z.strictObject({
  /** Per rollout: one score per completion token, or null for a rollout without scores. */
  // Values are checked by the backend, which names the rollout and token of a bad one.
  scores: z.array(z.union([z.custom<ArrayLike<number>>((v) => Array.isArray(v) || v instanceof Float32Array, 'must be an array of numbers, a Float32Array or null'), z.null()])),
  /** Which signal the scores stand for. */
  signal: z.string().min(1).default(SIGNAL_NAMES.gradXEmb),
});
export type PrecomputedConfig = z.output<typeof PrecomputedConfigSchema>;
export type PrecomputedConfigInput = z.input<typeof PrecomputedConfigSchema>;

/** Parse a backend's configuration; a bad one throws `SaliencyError('invalid_config')` naming each field and the allowed values. */
export function parseBackendConfig<S extends z.ZodType>(schema: S, input: unknown, backend: string): z.output<S> {
  try {
    return parseConfig(schema, input, `saliency backend ${backend}`);
  } catch (cause) {
    throw new SaliencyError('invalid_config', (cause as Error).message, {}, { cause });
  }
}
