import { z } from 'zod';
import type { SampledCompletion } from '../samplers/sampler.js';

/**
 * The request bodies `rlvr-serve` accepts: the OpenAI completion and chat protocols with vLLM's
 * extensions (`top_k`, `seed`, `return_tokens_as_token_ids`, `chat_template_kwargs`). Unknown
 * fields are ignored, as OpenAI-compatible servers do; features this server does not have
 * (streaming, echo, top log-probs, best_of) are refused with a 400 instead of being ignored.
 */

const Stop = z.union([z.string(), z.array(z.string())]).nullish();

const Sampling = {
  model: z.string().min(1),
  n: z.number().int().min(1).max(256).default(1),
  max_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  /** vLLM: -1 (or 0) = off */
  top_k: z.number().int().min(-1).nullish(),
  seed: z.number().int().nullish(),
  stop: Stop,
  return_tokens_as_token_ids: z.boolean().nullish(),
  /** checked before the schema (see `unsupportedFeature`) */
  stream: z.literal(false).nullish(),
  best_of: z.number().int().nullish(),
};

const TokenIds = z.array(z.number().int());

export const ServeCompletionRequestSchema = z.looseObject({
  ...Sampling,
  /** one prompt (text or token ids) or a list of them; choice `i * n + j` is completion j of prompt i */
  prompt: z.union([z.string(), TokenIds, z.array(z.string()), z.array(TokenIds)]),
  /** 0 = the sampled token's log-prob only; more (top alternatives) is not supported */
  logprobs: z.number().int().min(0).max(0, { error: 'only logprobs 0 (the sampled token) is supported, not top alternatives' }).nullish(),
  echo: z.literal(false).nullish(),
});
export type ServeCompletionRequest = z.output<typeof ServeCompletionRequestSchema>;

export const ServeChatRequestSchema = z.looseObject({
  ...Sampling,
  messages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).min(1),
  /** the OpenAI name of max_tokens */
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(0, { error: 'only top_logprobs 0 is supported' }).nullish(),
  add_generation_prompt: z.boolean().nullish(),
  chat_template_kwargs: z.looseObject({ enable_thinking: z.boolean().optional() }).nullish(),
});
export type ServeChatRequest = z.output<typeof ServeChatRequestSchema>;

/** A clear message for a feature this server does not have, or null. */
export function unsupportedFeature(body: Record<string, unknown>): { param: string; message: string } | null {
  if (body.stream === true) return { param: 'stream', message: 'streaming is not supported by rlvr-serve; send stream: false' };
  if (body.echo === true) return { param: 'echo', message: 'echo is not supported by rlvr-serve' };
  return null;
}

/** How one token appears in the log-probs: `"token_id:N"` (vLLM's `return_tokens_as_token_ids`) or its decoded text. */
export type TokenName = (id: number) => string;

/** A `/v1/completions` choice. */
export function completionChoice(index: number, c: SampledCompletion, withLogprobs: boolean, name: TokenName, pieceText: (id: number) => string): Record<string, unknown> {
  let logprobs: Record<string, unknown> | null = null;
  if (withLogprobs) {
    const tokens = c.tokens.map(name);
    const offsets: number[] = [];
    let at = 0;
    for (const id of c.tokens) {
      offsets.push(at);
      at += pieceText(id).length;
    }
    logprobs = { tokens, token_logprobs: c.logprobs, text_offset: offsets, top_logprobs: tokens.map((t, i) => ({ [t]: c.logprobs![i] })) };
  }
  return { index, text: c.text ?? '', logprobs, finish_reason: c.finish, stop_reason: null };
}

/** A `/v1/chat/completions` choice. */
export function chatChoice(index: number, c: SampledCompletion, withLogprobs: boolean, name: TokenName, pieceBytes: (id: number) => Uint8Array): Record<string, unknown> {
  const logprobs = withLogprobs ? { content: c.tokens.map((id, i) => ({ token: name(id), logprob: c.logprobs![i], bytes: [...pieceBytes(id)], top_logprobs: [] })) } : null;
  return { index, message: { role: 'assistant', content: c.text ?? '' }, logprobs, finish_reason: c.finish, stop_reason: null };
}
