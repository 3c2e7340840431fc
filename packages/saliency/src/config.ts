import { z } from 'zod';
import { parseConfig } from '@rlvr/core';
import { SaliencyError } from './errors.js';

/** Options every model-running backend shares (spread them into its schema). Defaults follow the GRAIL reference code. */
export const modelBackendOptions = {
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
  maxChunkElements: z
    .number()
    .int()
    .positive()
    .default(2 ** 23),
};

/** Parse a backend's configuration; a bad one throws `SaliencyError('invalid_config')` naming each field and the allowed values. */
export function parseBackendConfig<S extends z.ZodType>(schema: S, input: unknown, backend: string): z.output<S> {
  try {
    return parseConfig(schema, input, `saliency backend ${backend}`);
  } catch (cause) {
    throw new SaliencyError('invalid_config', (cause as Error).message, {}, { cause });
  }
}
