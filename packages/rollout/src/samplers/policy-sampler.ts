import { z } from 'zod';
import { CoreError, parseConfig } from '@rlvr/core';
import { defaultEosTokenIds, type ApplyChatTemplate, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { RolloutError } from '../errors.js';
import type { TokenBytes } from '@rlvr/core';
import { DecodeBatch } from './decode-batch.js';
import { DecodeQueue, type QueueStats } from './decode-queue.js';
import { DecodeRow } from './decode-row.js';
import { policyTokenBytes } from './policy-token-bytes.js';
import type { PromptSamples, SampledCompletion, Sampler, SampleRequest } from './sampler.js';

export const PolicySamplerOptionsSchema = z
  .object({
    /** rows (completions) decoded together; memory is O(batchSize x (longest row's context + padding)) */
    batchSize: z.number().int().min(1).default(16),
    /** false recomputes the whole forward pass for every new token (the slow, obviously-correct twin) */
    kvCache: z.boolean().default(true),
    /** token ids that end a completion (finish `stop`, the id kept); default: the config's `eos_token_id` plus the tokenizer's `<|im_end|>` and `<|endoftext|>` */
    eosTokenIds: z.array(z.number().int().min(0)).optional(),
    /** the id fed in padded positions (masked out, so any valid id works) */
    padTokenId: z.number().int().min(0).default(0),
    /** `Sampler.name` */
    name: z.string().min(1).default('policy'),
  })
  .strict();
export type PolicySamplerOptions = z.output<typeof PolicySamplerOptionsSchema>;
export type PolicySamplerOptionsInput = z.input<typeof PolicySamplerOptionsSchema>;

export interface PolicySamplerHooks {
  /** renders `messages` prompts (e.g. `@rlvr/policy`'s `ChatTemplate`); without it, such prompts fail */
  applyChatTemplate?: ApplyChatTemplate;
  /** Qwen3's switch passed to the template (default false: answer directly) */
  enableThinking?: boolean;
}

/** A `Sampler` on an in-process `@rlvr/policy` model, with what it decodes with. */
export interface PolicySampler extends Sampler {
  readonly tokenBytes: TokenBytes;
  readonly eosTokenIds: readonly number[];
  /** The prompt ids a request would be conditioned on (tokens as given; text / messages encoded). Throws on a prompt it cannot encode. */
  promptIds(request: SampleRequest): number[];
  /**
   * Why the model cannot decode these prompt ids with `maxNewTokens` more (empty, an id outside
   * the vocabulary, longer than the context), or null.
   */
  checkPrompt(ids: readonly number[], maxNewTokens: number): string | null;
  /**
   * Decode rows on this sampler's queue, sharing its running batch with every other call
   * (`sample` included); resolves when all have ended. For servers: rows carry their own
   * parameters and listeners. Rejects when `signal` aborts (the rows leave the batch).
   */
  decode(rows: readonly DecodeRow[], signal?: AbortSignal): Promise<readonly DecodeRow[]>;
  /** Requests and rows waiting and running. */
  stats(): QueueStats;
}

/**
 * The in-process sampler: continuous batched decoding of a `Qwen3Model` with its KV cache.
 *
 * - Rows (G completions of each prompt, across prompts and across concurrent calls) are decoded
 *   up to `batchSize` at a time; a row joins the running batch as soon as one ends (see
 *   `DecodeBatch`: a joining row's prompt is prefilled and its cache merged in, left-padded; the
 *   model's positions skip padding, so a row's logits do not depend on its neighbours).
 * - Row j of a request draws from its own `Rng` seeded by (request seed, j): the same requests
 *   with the same seeds give the same tokens (on the same backend and `batchSize`, with the same
 *   calls in flight; float sums may differ in the last bit across batch layouts).
 * - A row ends at an EOS id (kept, finish `stop`), when its decoded bytes contain a stop string
 *   (tokens up to the one completing it are kept, the text is cut before it: finish `stop`), or
 *   after `maxNewTokens` (finish `length`).
 * - Behaviour log-probs: log-softmax(logits / T) of the sampled token over the whole vocabulary
 *   (T = 1 for greedy), see `pickToken`.
 * - A prompt that cannot be decoded (empty, an id outside the vocabulary, longer than the model's
 *   context with `maxNewTokens`) gives `n` completions with finish `error`; nothing is thrown.
 */
export function policySampler(
  model: Qwen3Model,
  tokenizer: Tokenizer,
  options: PolicySamplerOptionsInput = {},
  hooks: PolicySamplerHooks = {},
): PolicySampler {
  const o = parseConfig(PolicySamplerOptionsSchema, options, 'policy sampler');
  const V = model.dims.V;
  const maxPositions = model.config.max_position_embeddings;
  const bytes = policyTokenBytes(tokenizer);
  const eosIds = o.eosTokenIds ?? defaultEosTokenIds(model.config, tokenizer);
  for (const [field, ids] of [
    ['padTokenId', [o.padTokenId]],
    ['eosTokenIds', eosIds],
  ] as const) {
    const bad = ids.find((id) => id >= V);
    if (bad !== undefined)
      throw new CoreError('invalid_config', `policy sampler: ${field} has id ${bad}, outside the model's vocabulary [0, ${V})`, { field });
  }
  const eos = new Set(eosIds);
  const queue = new DecodeQueue([new DecodeBatch(model, { capacity: o.batchSize, padTokenId: o.padTokenId, kvCache: o.kvCache })]);

  const promptIds = (req: SampleRequest): number[] => {
    const p = req.prompt;
    if (p.tokens !== undefined) return [...p.tokens];
    if (p.text !== undefined) return tokenizer.encode(p.text);
    if (p.messages !== undefined) {
      if (!hooks.applyChatTemplate)
        throw new RolloutError('invalid_row', 'a messages prompt needs a chat template (hooks.applyChatTemplate)', {
          field: 'prompt.messages',
        });
      return tokenizer.encode(
        hooks.applyChatTemplate(p.messages, { addGenerationPrompt: true, enableThinking: hooks.enableThinking ?? false }),
      );
    }
    throw new RolloutError('invalid_row', 'the prompt has none of tokens, text or messages', { field: 'prompt' });
  };

  const checkPrompt = (ids: readonly number[], maxNewTokens: number): string | null => {
    if (ids.length === 0) return 'the prompt is empty: the first token needs context';
    const bad = ids.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= V);
    if (bad >= 0) return `prompt token ${bad} = ${ids[bad]} is not an id in [0, ${V})`;
    if (ids.length + maxNewTokens > maxPositions) {
      return `prompt (${ids.length} tokens) + maxNewTokens (${maxNewTokens}) exceeds the model's context of ${maxPositions} (max_position_embeddings)`;
    }
    return null;
  };

  async function sample(requests: readonly SampleRequest[], signal?: AbortSignal): Promise<PromptSamples[]> {
    const prompts: number[][] = [];
    const failed: (string | null)[] = [];
    const rows: DecodeRow[][] = [];
    requests.forEach((req) => {
      let ids: number[] = [];
      let err: string | null;
      try {
        ids = promptIds(req);
        err = checkPrompt(ids, req.params.maxNewTokens);
      } catch (e) {
        err = (e as Error).message;
      }
      prompts.push(err === null ? ids : req.prompt.tokens ? [...req.prompt.tokens] : []);
      failed.push(err);
      rows.push(err !== null ? [] : Array.from({ length: req.n }, (_, j) => new DecodeRow(ids, req.params, j, eos, bytes)));
    });
    await queue.submit(rows.flat(), signal);
    const decoder = new TextDecoder();
    return requests.map((req, r) => ({
      promptTokens: prompts[r]!,
      completions:
        failed[r] !== null
          ? Array.from({ length: req.n }, () => ({ tokens: [], finish: 'error' as const, error: failed[r]! }))
          : rows[r]!.map(
              (row): SampledCompletion => ({
                tokens: row.tokens,
                logprobs: row.logprobs,
                finish: row.end!.finish,
                text: decoder.decode(row.text()),
              }),
            ),
    }));
  }

  return {
    name: o.name,
    tokenBytes: bytes,
    eosTokenIds: eosIds,
    promptIds,
    checkPrompt,
    sample,
    decode: (rows, signal) => queue.submit(rows, signal),
    stats: () => queue.stats(),
  };
}
