import { z } from 'zod';
import {
  FINISH_CODES,
  parseConfig,
  Rng,
  SPAN_STRIDE,
  setSpans,
  silentLogger,
  validateBatch,
  type Logger,
  type RolloutBatch,
} from '@rlvr/core';
import { RolloutError } from '../errors.js';
import { SpanOptionsSchema, spanLocator, tokensBytes, type TokenBytes } from '@rlvr/core';
import type { PromptSamples, SamplePrompt, Sampler, SampleRequest } from './sampler.js';

export const SampleOptionsSchema = z
  .object({
    /** G: completions per prompt */
    groupSize: z.number().int().min(1),
    temperature: z.number().min(0).default(1),
    topP: z.number().gt(0).max(1).default(1),
    /** 0 = off */
    topK: z.number().int().min(0).default(0),
    maxNewTokens: z.number().int().min(1),
    stop: z.array(z.string().min(1)).default([]),
    /** run seed: prompt i is sampled with a seed derived from (seed, i) */
    seed: z.number().int().default(0),
    /** how to find the answer span (needs token bytes from the sampler or the context) */
    spans: SpanOptionsSchema.prefault({}),
  })
  .strict();
export type SampleOptions = z.output<typeof SampleOptionsSchema>;
export type SampleOptionsInput = z.input<typeof SampleOptionsSchema>;

export interface SampleContext {
  /** token bytes for span location and decoding, overriding the sampler's own */
  tokenBytes?: TokenBytes;
  logger?: Logger;
  signal?: AbortSignal;
}

/** A sampled batch and what the columns cannot hold. All arrays are [B], rollout order = batch order. */
export interface SampledGroups {
  /** rollout i answers prompt `i / G` (groupIndex); rewards are 0, to be filled by the reward function */
  batch: RolloutBatch;
  /** decoded completion text ('' for failed rollouts, or when neither the sampler nor token bytes give text) */
  texts: string[];
  /** why a rollout failed, or null */
  errors: (string | null)[];
}

/**
 * Sample G completions for each prompt and lay them out as a `RolloutBatch`:
 * rollouts `i*G .. i*G+G-1` answer prompt i (group i); finish reasons and, when
 * the sampler reports them, behaviour log-probs; answer spans when token bytes are
 * known (else -1); each prompt's `reference` solution on all its rollouts. Failed requests become rollouts with finish `error` and no
 * tokens, counted in a warning; none is dropped. Bad options throw
 * `CoreError('invalid_config')` before any request; a sampler that breaks its
 * contract throws `RolloutError('invalid_response')`.
 */
export async function sampleGroups(
  prompts: readonly SamplePrompt[],
  sampler: Sampler,
  options: SampleOptionsInput,
  context: SampleContext = {},
): Promise<SampledGroups> {
  const o = parseConfig(SampleOptionsSchema, options, 'sampling');
  const logger = context.logger ?? silentLogger;
  const G = o.groupSize;
  const rng = new Rng(o.seed);
  const requests: SampleRequest[] = prompts.map((prompt) => ({
    prompt,
    n: G,
    params: { temperature: o.temperature, topP: o.topP, topK: o.topK, maxNewTokens: o.maxNewTokens, stop: o.stop, seed: rng.uint32() },
  }));
  const results = await sampler.sample(requests, context.signal);
  checkContract(sampler.name, requests, results);

  const B = prompts.length * G;
  let promptTotal = 0;
  let total = 0;
  let withLogprobs = true;
  for (const r of results) {
    promptTotal += r.promptTokens.length * G;
    for (const c of r.completions) {
      total += c.tokens.length;
      if (c.tokens.length > 0 && c.logprobs === undefined) withLogprobs = false;
    }
  }
  const batch: RolloutBatch = {
    numRollouts: B,
    groupIndex: new Int32Array(B),
    promptTokens: new Int32Array(promptTotal),
    promptOffsets: new Int32Array(B + 1),
    completionTokens: new Int32Array(total),
    completionOffsets: new Int32Array(B + 1),
    rewards: new Float32Array(B),
    finish: new Uint8Array(B),
    spans: new Int32Array(B * SPAN_STRIDE).fill(-1),
  };
  if (withLogprobs) batch.behaviorLogprobs = new Float32Array(total);
  if (prompts.some((q) => q.reference !== undefined)) setReferences(batch, prompts, G);
  const bytes = context.tokenBytes ?? sampler.tokenBytes;
  const locator = spanLocator(o.spans);
  const decoder = new TextDecoder();
  const texts: string[] = [];
  const errors: (string | null)[] = [];

  let i = 0;
  let p = 0;
  let t = 0;
  results.forEach((r, g) => {
    for (const c of r.completions) {
      batch.groupIndex[i] = g;
      batch.promptTokens.set(r.promptTokens, p);
      p += r.promptTokens.length;
      batch.promptOffsets[i + 1] = p;
      batch.completionTokens.set(c.tokens, t);
      if (batch.behaviorLogprobs && c.logprobs) batch.behaviorLogprobs.set(c.logprobs, t);
      t += c.tokens.length;
      batch.completionOffsets[i + 1] = t;
      batch.finish[i] = FINISH_CODES[c.finish];
      errors.push(c.finish === 'error' ? (c.error ?? 'sampler reported an error') : null);
      let text = c.text;
      if (bytes && c.finish !== 'error') {
        try {
          setSpans(batch.spans, i, locator.fromTokens(c.tokens, bytes));
          if (text === undefined) text = decoder.decode(tokensBytes(c.tokens, bytes));
        } catch (cause) {
          if (cause instanceof RolloutError)
            throw new RolloutError(cause.code, cause.message, { rollout: i, field: 'completionTokens' }, { cause });
          throw cause;
        }
      }
      texts.push(text ?? '');
      i++;
    }
  });
  const failed = errors.filter((e) => e !== null).length;
  if (failed > 0) logger.warn(`${failed} of ${B} rollouts failed and are marked "error"`, { sampler: sampler.name, failed, rollouts: B });
  if (!withLogprobs)
    logger.warn('the sampler did not report log-probs for every completion: the batch has no behaviorLogprobs', { sampler: sampler.name });
  return { batch: validateBatch(batch), texts, errors };
}

/** Each rollout's reference columns: its prompt's `reference` (empty for a prompt without one). */
function setReferences(batch: RolloutBatch, prompts: readonly SamplePrompt[], G: number): void {
  const total = prompts.reduce((n, q) => n + (q.reference?.length ?? 0) * G, 0);
  const tokens = new Int32Array(total);
  const offsets = new Int32Array(prompts.length * G + 1);
  let at = 0;
  prompts.forEach((q, g) => {
    for (let j = 0; j < G; j++) {
      if (q.reference !== undefined) tokens.set(q.reference, at);
      at += q.reference?.length ?? 0;
      offsets[g * G + j + 1] = at;
    }
  });
  batch.referenceTokens = tokens;
  batch.referenceOffsets = offsets;
}

function checkContract(name: string, requests: readonly SampleRequest[], results: readonly PromptSamples[]): void {
  const bad = (msg: string, at: { rollout?: number; field?: string } = {}) =>
    new RolloutError('invalid_response', `sampler ${name}: ${msg}`, at);
  if (results.length !== requests.length) throw bad(`returned ${results.length} results for ${requests.length} prompts`);
  results.forEach((r, g) => {
    if (r.completions.length !== requests[g]!.n)
      throw bad(`prompt ${g}: returned ${r.completions.length} completions, expected ${requests[g]!.n}`);
    const sum = r.completions.reduce((n, c) => n + c.tokens.length, 0);
    if (r.completionTokens !== undefined && r.completionTokens !== sum) {
      throw bad(
        `prompt ${g}: the completions carry ${sum} token ids of the ${r.completionTokens} sampled: a rollout batch needs them (an HTTP sampler needs returns "tokens")`,
        { rollout: g * requests[g]!.n, field: 'completionTokens' },
      );
    }
    r.completions.forEach((c, j) => {
      const at = { rollout: g * requests[g]!.n + j };
      if (c.logprobs !== undefined && c.logprobs.length !== c.tokens.length) {
        throw bad(`${c.logprobs.length} log-probs for ${c.tokens.length} tokens`, { ...at, field: 'behaviorLogprobs' });
      }
      if (c.finish === 'error' && c.tokens.length > 0)
        throw bad('a failed completion carries tokens', { ...at, field: 'completionTokens' });
    });
  });
}
