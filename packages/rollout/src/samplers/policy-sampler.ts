import { setImmediate } from 'node:timers/promises';
import * as tf from '@tensorflow/tfjs-core';
import { z } from 'zod';
import { CoreError, parseConfig, Rng, type FinishReason } from '@rlvr/core';
import { defaultEosTokenIds, type KVCache, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { RolloutError } from '../errors.js';
import type { ApplyChatTemplate } from '@rlvr/policy';
import type { PromptSamples, SampledCompletion, Sampler, SampleRequest, SamplingParams } from './sampler.js';
import type { TokenBytes } from '../spans/locate.js';
import { policyTokenBytes } from './policy-token-bytes.js';
import { StopMatcher } from './stop-matcher.js';
import { pickToken } from './token-sampling.js';

export const PolicySamplerOptionsSchema = z
  .object({
    /** rows (completions) decoded together; memory is O(batchSize x (longest prompt + maxNewTokens)) */
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
}

/** One completion being decoded. */
interface Row {
  request: number;
  prompt: number[];
  params: SamplingParams;
  rng: Rng;
  tokens: number[];
  logprobs: number[];
  matcher: StopMatcher;
  finish: FinishReason | null;
}

/**
 * The in-process sampler: batched autoregressive decoding of a `Qwen3Model` with its KV cache.
 *
 * - Rows (G completions of each prompt, across prompts) are decoded `batchSize` at a time, prompts
 *   left-padded to the longest in the batch (the model's positions skip padding, so a row's
 *   logits do not depend on its padding).
 * - Row j of a request draws from its own `Rng` seeded by (request seed, j): the same requests
 *   with the same seeds give the same tokens (on the same backend and `batchSize`; float sums may
 *   differ in the last bit across batch layouts).
 * - A row ends at an EOS id (kept, finish `stop`), when its decoded bytes contain a stop string
 *   (tokens up to the one completing it are kept, the text is cut before it: finish `stop`), or
 *   after `maxNewTokens` (finish `length`). Finished rows are fed padding with a 0 step mask;
 *   once at most half of the cache's rows are live, the finished ones are dropped from it.
 * - Behaviour log-probs: log-softmax(logits / T) of the sampled token over the whole vocabulary
 *   (T = 1 for greedy), see `pickToken`.
 * - A prompt that cannot be decoded (empty, an id outside the vocabulary, longer than the model's
 *   context with `maxNewTokens`) gives `n` completions with finish `error`; nothing is thrown.
 */
export function policySampler(model: Qwen3Model, tokenizer: Tokenizer, options: PolicySamplerOptionsInput = {}, hooks: PolicySamplerHooks = {}): PolicySampler {
  const o = parseConfig(PolicySamplerOptionsSchema, options, 'policy sampler');
  const V = model.dims.V;
  const maxPositions = model.config.max_position_embeddings;
  const bytes = policyTokenBytes(tokenizer);
  const eosIds = o.eosTokenIds ?? defaultEosTokenIds(model.config, tokenizer);
  for (const [field, ids] of [['padTokenId', [o.padTokenId]], ['eosTokenIds', eosIds]] as const) {
    const bad = ids.find((id) => id >= V);
    if (bad !== undefined) throw new CoreError('invalid_config', `policy sampler: ${field} has id ${bad}, outside the model's vocabulary [0, ${V})`, { field });
  }
  const eos = new Set(eosIds);

  const promptIds = (req: SampleRequest): number[] => {
    const p = req.prompt;
    if (p.tokens !== undefined) return [...p.tokens];
    if (p.text !== undefined) return tokenizer.encode(p.text);
    if (p.messages !== undefined) {
      if (!hooks.applyChatTemplate) throw new RolloutError('invalid_row', 'a messages prompt needs a chat template (hooks.applyChatTemplate)', { field: 'prompt.messages' });
      return tokenizer.encode(hooks.applyChatTemplate(p.messages, { addGenerationPrompt: true, enableThinking: hooks.enableThinking ?? false }));
    }
    throw new RolloutError('invalid_row', 'the prompt has none of tokens, text or messages', { field: 'prompt' });
  };

  const check = (ids: number[], params: SamplingParams): string | null => {
    if (ids.length === 0) return 'the prompt is empty: the first token needs context';
    const bad = ids.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= V);
    if (bad >= 0) return `prompt token ${bad} = ${ids[bad]} is not an id in [0, ${V})`;
    if (ids.length + params.maxNewTokens > maxPositions) {
      return `prompt (${ids.length} tokens) + maxNewTokens (${params.maxNewTokens}) exceeds the model's context of ${maxPositions} (max_position_embeddings)`;
    }
    return null;
  };

  async function sample(requests: readonly SampleRequest[], signal?: AbortSignal): Promise<PromptSamples[]> {
    const prompts: number[][] = [];
    const failed: (string | null)[] = [];
    const rows: Row[] = [];
    requests.forEach((req, r) => {
      let ids: number[] = [];
      let err: string | null;
      try {
        ids = promptIds(req);
        err = check(ids, req.params);
      } catch (e) {
        err = (e as Error).message;
      }
      prompts.push(err === null ? ids : req.prompt.tokens ? [...req.prompt.tokens] : []);
      failed.push(err);
      if (err !== null) return;
      for (let j = 0; j < req.n; j++) {
        rows.push({ request: r, prompt: ids, params: req.params, rng: new Rng(`policy|${req.params.seed}|${j}`), tokens: [], logprobs: [], matcher: new StopMatcher(req.params.stop), finish: null });
      }
    });
    for (let s = 0; s < rows.length; s += o.batchSize) await decode(rows.slice(s, s + o.batchSize), signal);

    const out: PromptSamples[] = requests.map((req, r) => ({
      promptTokens: prompts[r]!,
      completions: failed[r] !== null ? Array.from({ length: req.n }, () => ({ tokens: [], finish: 'error' as const, error: failed[r]! })) : [],
    }));
    const decoder = new TextDecoder();
    for (const row of rows) {
      const c: SampledCompletion = { tokens: row.tokens, logprobs: row.logprobs, finish: row.finish!, text: decoder.decode(row.matcher.text()) };
      (out[row.request]!.completions as SampledCompletion[]).push(c);
    }
    return out;
  }

  /** Decode one batch of rows to the end (all finished or the longest `maxNewTokens`). */
  async function decode(rows: Row[], signal?: AbortSignal): Promise<void> {
    const B = rows.length;
    const P = Math.max(...rows.map((r) => r.prompt.length));
    const steps = Math.max(...rows.map((r) => r.params.maxNewTokens));
    // Host copies of the whole sequence (left-padded prompts, then one column per step): the
    // KV-cache path uses only the prompt part, the recompute path re-reads all of it.
    const width = P + steps;
    const ids = new Int32Array(B * width).fill(o.padTokenId);
    const mask = new Int32Array(B * width);
    rows.forEach((r, b) => {
      ids.set(r.prompt, b * width + P - r.prompt.length);
      mask.fill(1, b * width + P - r.prompt.length, b * width + P);
    });
    let cache: KVCache | null = null;
    try {
      let logits: tf.Tensor2D;
      if (o.kvCache) {
        const pIds = tf.tensor2d(sliceCols(ids, B, width, P), [B, P], 'int32');
        const pMask = tf.tensor2d(sliceCols(mask, B, width, P), [B, P], 'int32');
        try {
          ({ logits, cache } = model.prefill(pIds, pMask));
        } finally {
          tf.dispose([pIds, pMask]);
        }
      } else {
        logits = lastLogits(model, ids, mask, B, width, P);
      }
      // cache row s holds rows[slots[s]]; finished rows leave the cache once at most half are live
      let slots = rows.map((_, b) => b);
      for (let t = 0; ; t++) {
        const host = (await logits.data()) as Float32Array;
        logits.dispose();
        // data() resolves as a microtask on the cpu and wasm backends: yield a macrotask so that
        // I/O (a server's other requests, a client's disconnect) and abort signals get through
        await setImmediate();
        signal?.throwIfAborted();
        let next = new Int32Array(slots.length).fill(o.padTokenId);
        let live = new Float32Array(slots.length);
        slots.forEach((ri, s) => {
          const r = rows[ri]!;
          if (r.finish !== null) return;
          const { id, logprob } = pickToken(host.subarray(s * V, (s + 1) * V), r.params, r.rng);
          r.tokens.push(id);
          r.logprobs.push(logprob);
          if (eos.has(id)) r.finish = 'stop';
          else if (r.matcher.push(bytes.tokenBytes(id))) r.finish = 'stop';
          else if (r.tokens.length >= r.params.maxNewTokens) r.finish = 'length';
          next[s] = id;
          live[s] = 1;
        });
        if (rows.every((r) => r.finish !== null) || t + 1 >= steps) {
          for (const r of rows) r.finish ??= 'length';
          return;
        }
        if (!cache) {
          // the sampled tokens become column P + t; a row that is done feeds padding, masked out
          for (let b = 0; b < B; b++) {
            ids[b * width + P + t] = next[b]!;
            mask[b * width + P + t] = live[b]!;
          }
          logits = lastLogits(model, ids, mask, B, width, P + t + 1);
          continue;
        }
        const keep = slots.flatMap((ri, s) => (rows[ri]!.finish === null ? [s] : []));
        if (keep.length <= slots.length / 2) {
          compact(cache, keep);
          slots = keep.map((s) => slots[s]!);
          next = Int32Array.from(keep, (s) => next[s]!);
          live = new Float32Array(keep.length).fill(1);
        }
        const c = cache;
        const [n, l] = [next, live];
        logits = tf.tidy(() => model.decodeStep(c, tf.tensor1d(n, 'int32'), tf.tensor1d(l, 'float32')));
      }
    } finally {
      cache?.dispose();
    }
  }

  return {
    name: o.name,
    tokenBytes: bytes,
    eosTokenIds: eosIds,
    promptIds,
    sample,
  };
}

/** Keep only the cache rows `keep` (batch positions, in order): keys, values `[B, KV, S, hd]` and the key mask `[B, S]`. */
function compact(cache: KVCache, keep: number[]): void {
  const idx = tf.tensor1d(keep, 'int32');
  const old = cache.layers;
  const oldMask = cache.keyMask;
  cache.layers = old.map((l) => ({ k: tf.gather(l.k, idx) as tf.Tensor4D, v: tf.gather(l.v, idx) as tf.Tensor4D }));
  cache.keyMask = tf.gather(oldMask, idx) as tf.Tensor2D;
  for (const l of old) tf.dispose([l.k, l.v]);
  tf.dispose([oldMask, idx]);
}

/** The recompute twin: logits `[B, V]` of the last of the first `len` columns, from a full forward pass. */
function lastLogits(model: Qwen3Model, ids: Int32Array, mask: Int32Array, B: number, width: number, len: number): tf.Tensor2D {
  return tf.tidy(() => {
    const h = model.hidden({ ids: tf.tensor2d(sliceCols(ids, B, width, len), [B, len], 'int32'), attentionMask: tf.tensor2d(sliceCols(mask, B, width, len), [B, len], 'int32') });
    const last = tf.slice(h, [0, len - 1, 0], [B, 1, model.dims.D]) as tf.Tensor3D;
    return tf.reshape(model.project(last), [B, model.dims.V]) as tf.Tensor2D;
  });
}

/** The first `len` columns of a row-major `[B, width]` array. */
function sliceCols(a: Int32Array, B: number, width: number, len: number): Int32Array {
  if (len === width) return a;
  const out = new Int32Array(B * len);
  for (let b = 0; b < B; b++) out.set(a.subarray(b * width, b * width + len), b * len);
  return out;
}
