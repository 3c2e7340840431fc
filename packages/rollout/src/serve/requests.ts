/**
 * The text side of a request: the parsed body checked against its schema, chat messages rendered
 * through the template, prompts tokenized and fitted to the context, and `/tokenize` and
 * `/detokenize` answered whole. No model, no decoding: the same code runs in the server's thread
 * (small bodies) and in the text thread (`text-thread.ts`: big bodies and request-given chat
 * templates), so that neither path can answer differently.
 */
import type { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { checkEncodable, ChatTemplate, type ApplyChatTemplate, type Tokenizer } from '@rlvr/policy';
import { tokensBytes, type TokenBytes } from '@rlvr/core';
import { echo, echoName, HttpError } from './http.js';
import {
  DetokenizeRequestSchema,
  messageText,
  refusedParameter,
  ServeChatRequestSchema,
  ServeCompletionRequestSchema,
  TokenizeRequestSchema,
  withoutNoops,
  type ServeChatRequest,
  type ServeCompletionRequest,
} from './protocol.js';

/** What the text side needs of the served model: its tokenizer and template, and the numbers prompts are checked against. */
export interface TextEngine {
  tokenizer: Tokenizer;
  /** the decode's token bytes (special tokens empty) */
  tokenBytes: TokenBytes;
  applyChatTemplate: ApplyChatTemplate | undefined;
  servedModelName: string;
  /** the model's context, `max_position_embeddings` */
  context: number;
  /** ids the model has (rows of its embedding) */
  vocab: number;
  defaultMaxTokens: number;
  /** completions (prompts x n) one request may ask for */
  maxRowsPerRequest: number;
}

/** The routes whose bodies the text side reads. */
export type TextRoute = '/tokenize' | '/detokenize' | '/v1/completions' | '/v1/chat/completions';

/** A completion request checked and tokenized: its fields without the prompt, and the prompts' ids. */
export interface PreparedCompletion {
  kind: 'completions';
  request: Omit<ServeCompletionRequest, 'prompt'>;
  prompts: number[][];
  maxTokens: number;
}

/** A chat request checked, rendered and tokenized: its fields without the messages, and the prompt's ids. */
export interface PreparedChat {
  kind: 'chat';
  request: Omit<ServeChatRequest, 'messages' | 'chat_template'>;
  ids: number[];
  maxTokens: number;
}

/** A `/tokenize` or `/detokenize` answer, as the JSON text of the response. */
interface TextAnswer {
  kind: 'answer';
  json: string;
}

export type Prepared = PreparedCompletion | PreparedChat | TextAnswer;

/** The body checked against a route's schema, with OpenAI-style 400s naming the parameter (echoed values cut at 200 characters). */
function validate<S extends z.ZodType>(schema: S, body: unknown, endpoint: 'completions' | 'chat' | 'tokenize'): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object');
  let fields = body as Record<string, unknown>;
  if (endpoint !== 'tokenize') {
    const refused = refusedParameter(fields, endpoint);
    if (refused) throw new HttpError(400, refused.message, refused.param);
    fields = withoutNoops(fields);
    if (endpoint === 'chat' && fields.echo === false) delete fields.echo;
  }
  const r = schema.safeParse(fields);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && 'keys' in unknown) {
    const keys = unknown.keys as string[];
    const at = unknown.path.length > 0 ? `${unknown.path.join('.')}.` : '';
    const shown = keys.slice(0, 8).map((k) => echoName(at + k));
    throw new HttpError(
      400,
      `unknown parameter${keys.length > 1 ? 's' : ''} ${shown.join(', ')}${keys.length > 8 ? ` and ${keys.length - 8} more` : ''} (rlvr-serve refuses what it does not implement; see docs/serve.md)`,
      at + keys[0]!,
    );
  }
  const clauses = r.error.issues.slice(0, 4).map((i) => {
    const got = valueAt(fields, i.path);
    return `${formatZodIssues([i])}${got === undefined ? '' : ` (got ${echo(got)})`}`;
  });
  const more = r.error.issues.length > 4 ? `; and ${r.error.issues.length - 4} more` : '';
  throw new HttpError(400, `invalid request: ${clauses.join('; ')}${more}`, issue.path.join('.') || null);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function checkModel(e: TextEngine, m: string | null | undefined): void {
  if (m != null && m !== e.servedModelName) throw new HttpError(404, `The model \`${echoName(m)}\` does not exist.`, 'model');
}

/**
 * Encode a text prompt for `field`, refusing, before any work, one that cannot fit the context with
 * `maxTokens` more (`null`: no context to fit, as for /tokenize) or that the tokenizer refuses.
 */
function encodePrompt(e: TextEngine, text: string, field: string, maxTokens: number | null): number[] {
  // a token is at most `longest` bytes: fewer tokens than this are impossible
  const atLeast = maxTokens === null ? 0 : Math.ceil(Buffer.byteLength(text, 'utf8') / longestToken(e.tokenizer));
  if (maxTokens !== null && atLeast + maxTokens > e.context) {
    throw new HttpError(
      400,
      `${field} has ${text.length} characters, at least ${atLeast} tokens: over the model's context of ${e.context} tokens with ${maxTokens} to generate`,
      field,
    );
  }
  try {
    checkEncodable(text);
    return e.tokenizer.encode(text);
  } catch (err) {
    throw new HttpError(400, `${field}: ${(err as Error).message}`, field);
  }
}

const longest = new WeakMap<Tokenizer, number>();
function longestToken(t: Tokenizer): number {
  let n = longest.get(t);
  if (n === undefined) {
    n = 1;
    for (let id = 0; id < t.vocabSize; id++) {
      try {
        n = Math.max(n, t.tokenBytes(id).length);
      } catch {
        // an id the tokenizer does not use
      }
    }
    longest.set(t, n);
  }
  return n;
}

/** Check one prompt's ids (empty, out of the vocabulary, over the context) with vLLM's messages. */
function checkPrompt(e: TextEngine, ids: readonly number[], maxTokens: number, field: string): void {
  if (ids.length === 0) throw new HttpError(400, 'the prompt is empty', field);
  const bad = ids.findIndex((id) => id >= e.vocab);
  if (bad >= 0) throw new HttpError(400, `token id ${ids[bad]} at position ${bad} is not in the vocabulary [0, ${e.vocab})`, field);
  if (ids.length + maxTokens > e.context) {
    throw new HttpError(
      400,
      `This model's maximum context length is ${e.context} tokens. However, you requested ${ids.length + maxTokens} tokens (${ids.length} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
      field,
    );
  }
}

/** The id lists of the sampling fields checked against the vocabulary (and no longer than it), so that what reaches the decode is bounded. */
function checkSamplingIds(e: TextEngine, r: ServeCompletionRequest | ServeChatRequest): void {
  const V = e.vocab;
  const checkIds = (ids: readonly number[], field: string): void => {
    if (ids.length > V) throw new HttpError(400, `${field} has ${ids.length} ids, more than the vocabulary's ${V}`, field);
    const bad = ids.find((id) => id >= V);
    if (bad !== undefined) throw new HttpError(400, `token id ${bad} is not in the vocabulary [0, ${V})`, field);
  };
  checkIds(r.stop_token_ids ?? [], 'stop_token_ids');
  checkIds(r.allowed_token_ids ?? [], 'allowed_token_ids');
  checkIds(Object.keys(r.logit_bias ?? {}).map(Number), 'logit_bias');
}

function prepareCompletion(e: TextEngine, body: unknown): PreparedCompletion {
  const { prompt, ...request } = validate(ServeCompletionRequestSchema, body, 'completions');
  checkModel(e, request.model);
  const maxTokens = request.max_tokens ?? e.defaultMaxTokens;
  if (maxTokens === 0 && request.echo !== true)
    throw new HttpError(400, 'max_tokens 0 needs echo: true (scoring the prompt)', 'max_tokens');
  const list: (string | number[])[] =
    typeof prompt === 'string' || (prompt.length > 0 && typeof prompt[0] === 'number')
      ? [prompt as string | number[]]
      : (prompt as (string | number[])[]);
  if (list.length === 0) throw new HttpError(400, 'the prompt list is empty', 'prompt');
  if (list.length * request.n > e.maxRowsPerRequest)
    throw new HttpError(
      400,
      `${list.length} prompts x n = ${request.n} is ${list.length * request.n} completions, over the limit of ${e.maxRowsPerRequest} per request`,
      'n',
    );
  checkSamplingIds(e, request as ServeCompletionRequest);
  const prompts = list.map((p, i) => {
    const field = list.length > 1 ? `prompt.${i}` : 'prompt';
    let ids = typeof p === 'string' ? encodePrompt(e, p, field, maxTokens) : p;
    const keep = request.truncate_prompt_tokens;
    if (keep != null && ids.length > keep) ids = ids.slice(ids.length - keep);
    checkPrompt(e, ids, maxTokens, field);
    return ids;
  });
  return { kind: 'completions', request, prompts, maxTokens };
}

function prepareChat(e: TextEngine, body: unknown): PreparedChat {
  const { messages: given, chat_template, ...request } = validate(ServeChatRequestSchema, body, 'chat');
  checkModel(e, request.model);
  let apply = e.applyChatTemplate;
  if (chat_template != null) {
    try {
      apply = new ChatTemplate(chat_template).apply;
    } catch (err) {
      throw new HttpError(400, `chat_template: ${(err as Error).message}`, 'chat_template');
    }
  }
  if (!apply) throw new HttpError(400, 'this model has no chat template: use /v1/completions, or send chat_template', 'messages');
  const messages = given.map((m) => ({
    role: m.role,
    content: messageText(m.content),
    ...(m.reasoning_content != null ? { reasoning_content: m.reasoning_content } : {}),
  }));
  const { enable_thinking, ...extra } = request.chat_template_kwargs ?? {};
  if (enable_thinking !== undefined && typeof enable_thinking !== 'boolean')
    throw new HttpError(400, 'chat_template_kwargs.enable_thinking must be a boolean', 'chat_template_kwargs.enable_thinking');
  let text: string;
  try {
    text = apply(messages, {
      addGenerationPrompt: request.add_generation_prompt ?? true,
      enableThinking: enable_thinking ?? true,
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    });
  } catch (err) {
    throw new HttpError(400, (err as Error).message, Object.keys(extra).length > 0 ? 'chat_template_kwargs' : 'messages');
  }
  const requested = request.max_completion_tokens ?? request.max_tokens ?? null;
  let ids = encodePrompt(e, text, 'messages', requested ?? 1);
  if (request.truncate_prompt_tokens != null && ids.length > request.truncate_prompt_tokens)
    ids = ids.slice(ids.length - request.truncate_prompt_tokens);
  const maxTokens = requested ?? Math.max(1, e.context - ids.length); // chat default: the rest of the context
  checkPrompt(e, ids, maxTokens, 'messages');
  if (request.n > e.maxRowsPerRequest)
    throw new HttpError(400, `n = ${request.n} is over the limit of ${e.maxRowsPerRequest} completions per request`, 'n');
  checkSamplingIds(e, request as ServeChatRequest);
  return { kind: 'chat', request, ids, maxTokens };
}

function tokenize(e: TextEngine, body: unknown): TextAnswer {
  const r = validate(TokenizeRequestSchema, body, 'tokenize');
  checkModel(e, r.model);
  let text: string;
  if ('prompt' in r) text = r.prompt;
  else {
    if (!e.applyChatTemplate) throw new HttpError(400, 'this model has no chat template: tokenize a prompt instead', 'messages');
    const { enable_thinking, ...extra } = r.chat_template_kwargs ?? {};
    try {
      text = e.applyChatTemplate(
        r.messages.map((m) => ({ role: m.role, content: messageText(m.content) })),
        {
          addGenerationPrompt: r.add_generation_prompt ?? true,
          enableThinking: typeof enable_thinking === 'boolean' ? enable_thinking : true,
          ...(Object.keys(extra).length > 0 ? { extra } : {}),
        },
      );
    } catch (err) {
      throw new HttpError(400, (err as Error).message, Object.keys(extra).length > 0 ? 'chat_template_kwargs' : 'messages');
    }
  }
  const tokens = encodePrompt(e, text, 'prompt' in r ? 'prompt' : 'messages', null);
  const decoder = new TextDecoder();
  const strs = r.return_token_strs === true ? tokens.map((id) => decoder.decode(e.tokenBytes.tokenBytes(id))) : null;
  return { kind: 'answer', json: JSON.stringify({ count: tokens.length, max_model_len: e.context, tokens, token_strs: strs }) };
}

function detokenize(e: TextEngine, body: unknown): TextAnswer {
  const r = validate(DetokenizeRequestSchema, body, 'tokenize');
  checkModel(e, r.model);
  const bad = r.tokens.findIndex((id) => id >= e.vocab);
  if (bad >= 0) throw new HttpError(400, `token id ${r.tokens[bad]} at position ${bad} is not in the vocabulary [0, ${e.vocab})`, 'tokens');
  return { kind: 'answer', json: JSON.stringify({ prompt: new TextDecoder().decode(tokensBytes(r.tokens, e.tokenBytes)) }) };
}

/** The text side of one request to `route`, from its parsed body; a bad request throws its `HttpError`. */
export function prepareRequest(e: TextEngine, route: TextRoute, body: unknown): Prepared {
  switch (route) {
    case '/tokenize':
      return tokenize(e, body);
    case '/detokenize':
      return detokenize(e, body);
    case '/v1/completions':
      return prepareCompletion(e, body);
    case '/v1/chat/completions':
      return prepareChat(e, body);
  }
}

/** A request whose text side runs in the text thread even when its body is small: a chat template it brings (arbitrary Jinja). */
export function bringsTemplate(route: TextRoute, body: unknown): boolean {
  return (
    route === '/v1/chat/completions' && typeof body === 'object' && body !== null && (body as Record<string, unknown>).chat_template != null
  );
}
