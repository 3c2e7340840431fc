/**
 * The request bodies `rlvr-serve` accepts: the OpenAI completion and chat protocols with vLLM's
 * extensions. Every parameter is either implemented or refused with a 400 that names it (never
 * ignored): the parameters of both protocols that this server does not have are refused with a
 * reason (`REFUSED`), and a field that is in neither protocol is refused as unknown. The list, with
 * what each parameter does, is `docs/serve.md`.
 */
import { z } from 'zod';

/** The most alternatives `logprobs` / `top_logprobs` / `prompt_logprobs` may ask for (vLLM's default limit). */
const MAX_LOGPROBS = 20;

/** The most stop strings a request may give (vLLM has no limit; each one is looked for after every token). */
const MAX_STOP_STRINGS = 64;
const Stop = z
  .union([z.string(), z.array(z.string())])
  .refine((s) => typeof s === 'string' || s.length <= MAX_STOP_STRINGS, {
    error: (i) => `at most ${MAX_STOP_STRINGS} stop strings, not ${(i.input as string[]).length}`,
  })
  .nullish();
const TokenId = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);
const Penalty = z.number().min(-2).max(2).nullish();

/** Fields shared by both endpoints (vLLM's `SamplingParams` as request fields). */
const Sampling = {
  model: z.string().min(1),
  n: z.number().int().min(1).max(256).default(1),
  temperature: z.number().min(0).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  /** vLLM: -1 (or 0) = off */
  top_k: z.number().int().min(-1).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nullish(),
  stop: Stop,
  stop_token_ids: z.array(TokenId).max(64).nullish(),
  include_stop_str_in_output: z.boolean().nullish(),
  ignore_eos: z.boolean().nullish(),
  min_tokens: z.number().int().min(0).nullish(),
  presence_penalty: Penalty,
  frequency_penalty: Penalty,
  repetition_penalty: z.number().gt(0).max(10).nullish(),
  logit_bias: z.record(z.string().regex(/^\d+$/, { message: 'keys are token ids' }), z.number().min(-100).max(100)).nullish(),
  allowed_token_ids: z.array(TokenId).min(1).nullish(),
  skip_special_tokens: z.boolean().nullish(),
  /** token strings of the log-probs as `"token_id:N"` */
  return_tokens_as_token_ids: z.boolean().nullish(),
  /** vLLM >= 0.10: `prompt_token_ids` and `token_ids` in every choice */
  return_token_ids: z.boolean().nullish(),
  prompt_logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
  truncate_prompt_tokens: z.number().int().min(1).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.strictObject({ include_usage: z.boolean().nullish(), continuous_usage_stats: z.boolean().nullish() }).nullish(),
  /** equal to `n` (or absent): the n completions are the n best */
  best_of: z.number().int().min(1).nullish(),
  /** an end-user id for abuse tracking: no effect on the output */
  user: z.string().nullish(),
  /** rlvr tokenizers add no BOS / EOS, so both values encode the same */
  add_special_tokens: z.boolean().nullish(),
  /** vLLM's scheduling priority: one queue here, so only 0 */
  priority: z.literal(0).nullish(),
};

const TokenIds = z.array(TokenId);

export const ServeCompletionRequestSchema = z.strictObject({
  ...Sampling,
  /** one prompt (text or token ids) or a list of them; choice `i * n + j` is completion j of prompt i */
  prompt: z.union([z.string(), TokenIds, z.array(z.string()), z.array(TokenIds)]),
  /** default 16; 0 only with echo (score the prompt) */
  max_tokens: z.number().int().min(0).nullish(),
  /** the sampled token's log-prob and the k most likely alternatives at each position */
  logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
  /** the prompt before the completion in the text, with its tokens' log-probs when `logprobs` is set */
  echo: z.boolean().nullish(),
});
export type ServeCompletionRequest = z.output<typeof ServeCompletionRequestSchema>;

const TextPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const Message = z.strictObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(TextPart)]).nullable(),
  reasoning_content: z.string().nullish(),
});

export const ServeChatRequestSchema = z.strictObject({
  ...Sampling,
  messages: z.array(Message).min(1),
  max_tokens: z.number().int().min(1).nullish(),
  /** the OpenAI name of max_tokens */
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
  add_generation_prompt: z.boolean().nullish(),
  /** variables for the chat template (Qwen3's `enable_thinking`, default true) */
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  /** a Jinja chat template to use instead of the model's */
  chat_template: z.string().nullish(),
  /** `{"type": "text"}` only */
  response_format: z.strictObject({ type: z.literal('text') }).nullish(),
  /** none here, so only `none` or `auto` */
  tool_choice: z.enum(['none', 'auto']).nullish(),
  /** no effect without tools */
  parallel_tool_calls: z.boolean().nullish(),
});
export type ServeChatRequest = z.output<typeof ServeChatRequestSchema>;

export const TokenizeRequestSchema = z.union([
  z.strictObject({
    model: z.string().nullish(),
    prompt: z.string(),
    add_special_tokens: z.boolean().nullish(),
    return_token_strs: z.boolean().nullish(),
  }),
  z.strictObject({
    model: z.string().nullish(),
    messages: z.array(Message).min(1),
    add_generation_prompt: z.boolean().nullish(),
    add_special_tokens: z.boolean().nullish(),
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
    return_token_strs: z.boolean().nullish(),
  }),
]);
export const DetokenizeRequestSchema = z.strictObject({ model: z.string().nullish(), tokens: TokenIds });

/**
 * Parameters of the two protocols this server does not implement, with why: refused with a 400
 * naming them when set to anything but their no-op value.
 */
const REFUSED: Record<string, { noop: (v: unknown) => boolean; why: string }> = {
  suffix: { noop: (v) => v == null || v === '', why: 'suffix (fill-in-the-middle) is not supported (vLLM neither)' },
  use_beam_search: { noop: (v) => v == null || v === false, why: 'beam search is not supported' },
  length_penalty: { noop: (v) => v == null || v === 1, why: 'length_penalty applies to beam search, which is not supported' },
  tools: { noop: (v) => v == null || (Array.isArray(v) && v.length === 0), why: 'tool calling is not supported' },
  functions: { noop: (v) => v == null, why: 'function calling is not supported' },
  function_call: { noop: (v) => v == null || v === 'none', why: 'function calling is not supported' },
  guided_json: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  guided_regex: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  guided_choice: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  guided_grammar: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  guided_decoding_backend: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  guided_whitespace_pattern: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  structured_outputs: { noop: (v) => v == null, why: 'guided decoding is not supported' },
  logits_processors: { noop: (v) => v == null || (Array.isArray(v) && v.length === 0), why: 'custom logits processors are not supported' },
  bad_words: { noop: (v) => v == null || (Array.isArray(v) && v.length === 0), why: 'bad_words is not supported' },
  spaces_between_special_tokens: {
    noop: (v) => v == null || v === true,
    why: 'only spaces_between_special_tokens: true (the default) is supported',
  },
  continue_final_message: { noop: (v) => v == null || v === false, why: 'continue_final_message is not supported' },
  documents: { noop: (v) => v == null, why: 'documents (RAG templates) are not supported' },
  modalities: { noop: (v) => v == null || (Array.isArray(v) && v.length === 1 && v[0] === 'text'), why: 'only text output is supported' },
  audio: { noop: (v) => v == null, why: 'audio output is not supported' },
  prediction: { noop: (v) => v == null, why: 'predicted outputs are not supported' },
  reasoning_effort: { noop: (v) => v == null, why: 'reasoning_effort is not supported (use chat_template_kwargs.enable_thinking)' },
  web_search_options: { noop: (v) => v == null, why: 'web search is not supported' },
  store: { noop: (v) => v == null || v === false, why: 'stored completions are not supported' },
  metadata: { noop: (v) => v == null, why: 'metadata is only for stored completions, which are not supported' },
  service_tier: { noop: (v) => v == null || v === 'auto' || v === 'default', why: 'service tiers are not supported' },
  kv_transfer_params: { noop: (v) => v == null, why: 'KV transfer is not supported' },
  mm_processor_kwargs: { noop: (v) => v == null, why: 'multi-modal inputs are not supported' },
  cache_salt: { noop: (v) => v == null, why: 'prefix caching is not supported' },
};

/** The first parameter of the body this server refuses, with why; or null. Runs before the schema. */
export function refusedParameter(
  body: Record<string, unknown>,
  endpoint: 'completions' | 'chat',
): { param: string; message: string } | null {
  for (const [param, rule] of Object.entries(REFUSED)) {
    if (Object.hasOwn(body, param) && !rule.noop(body[param])) return { param, message: rule.why };
  }
  if (endpoint === 'chat' && Object.hasOwn(body, 'echo') && body.echo != null && body.echo !== false)
    return { param: 'echo', message: 'echo on /v1/chat/completions is not supported (it is on /v1/completions)' };
  if (body.best_of != null && body.best_of !== (body.n ?? 1)) return { param: 'best_of', message: 'best_of other than n is not supported' };
  if (body.stream_options != null && body.stream !== true) return { param: 'stream_options', message: 'stream_options needs stream: true' };
  if (endpoint === 'chat' && body.top_logprobs != null && body.top_logprobs !== 0 && body.logprobs !== true)
    return { param: 'top_logprobs', message: 'top_logprobs needs logprobs: true' };
  if (endpoint === 'chat' && Array.isArray(body.messages)) {
    const at = (body.messages as unknown[]).findIndex(
      (m) => typeof m === 'object' && m !== null && ('tool_calls' in m || 'tool_call_id' in m || 'name' in m),
    );
    if (at >= 0)
      return { param: `messages.${at}`, message: 'message fields name, tool_calls and tool_call_id are not supported (no tool calling)' };
  }
  return null;
}

/** The body without the refused parameters set to their no-op values (`tools: []`), which the strict schemas do not list. */
export function withoutNoops(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const param of Object.keys(REFUSED)) delete out[param];
  return out;
}

/** The text of a chat message's content (text parts joined). */
export function messageText(content: string | readonly { text: string }[] | null): string {
  if (content === null) return '';
  return typeof content === 'string' ? content : content.map((p) => p.text).join('');
}
