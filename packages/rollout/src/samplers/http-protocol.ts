import { z } from 'zod';
import { formatZodIssues, type FinishReason } from '@rlvr/core';
import { RolloutError } from '../errors.js';
import type { PromptSamples, SampledCompletion, SamplePrompt, SamplingParams } from './sampler.js';

/**
 * The OpenAI-compatible wire format as vLLM speaks it (SGLang follows it): request
 * bodies for `/v1/completions` and `/v1/chat/completions`, and zod schemas that every
 * response passes through. Two shapes of response:
 * - `tokens` (what a rollout batch needs): token ids come back as `"token_id:123"` strings
 *   in the log-probs (`logprobs: 0` with `return_tokens_as_token_ids`), or as `token_ids`
 *   lists from servers that support vLLM's `return_token_ids`; a response without either is
 *   rejected;
 * - `text` (what an evaluation needs): no log-probs asked; the text, the finish reason and
 *   `usage.completion_tokens`, the tokens of the request's choices together.
 */

/** Token ids fit a `RolloutBatch`'s Int32Array: a larger one would wrap around (4294967297 to 1). */
const MAX_TOKEN_ID = 2 ** 31 - 1;
const Ids = z.array(z.number().int().nonnegative().max(MAX_TOKEN_ID));

const CompletionChoiceSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  text: z.string(),
  logprobs: z
    .looseObject({
      tokens: z.array(z.string()),
      token_logprobs: z.array(z.number().nullable()),
    })
    .nullable()
    .optional(),
  finish_reason: z.string().nullable(),
  token_ids: Ids.nullable().optional(),
  prompt_token_ids: Ids.nullable().optional(),
});

const UsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative().optional(),
});

export const CompletionResponseSchema = z.looseObject({
  choices: z.array(CompletionChoiceSchema),
  prompt_token_ids: Ids.nullable().optional(),
  usage: UsageSchema.nullable().optional(),
});

const ChatChoiceSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  message: z.looseObject({ content: z.string().nullable() }),
  logprobs: z
    .looseObject({
      content: z.array(z.looseObject({ token: z.string(), logprob: z.number() })).nullable(),
    })
    .nullable()
    .optional(),
  finish_reason: z.string().nullable(),
  token_ids: Ids.nullable().optional(),
});

export const ChatResponseSchema = z.looseObject({
  choices: z.array(ChatChoiceSchema),
  prompt_token_ids: Ids.nullable().optional(),
  usage: UsageSchema.nullable().optional(),
});

export type Endpoint = 'completions' | 'chat';

/** What a response carries: the sampled ids and their log-probs, or the text and a token count. */
export type Returns = 'tokens' | 'text';

/** How a request is sent: streamed (SSE), whether a text prompt is echoed back (to learn its token ids), what comes back. */
export interface RequestMode {
  stream: boolean;
  echo: boolean;
  returns: Returns;
}

const DEFAULT_MODE: RequestMode = { stream: false, echo: false, returns: 'tokens' };

/** Whether a completions request for this prompt echoes it: text prompts only (token prompts are known). */
export const echoes = (endpoint: Endpoint, prompt: SamplePrompt, mode: RequestMode): boolean =>
  mode.echo && endpoint === 'completions' && prompt.tokens === undefined;

/** The JSON body of one request for `n` completions of a prompt; `extra` adds fields (it cannot replace the ones set here). */
export function requestBody(
  endpoint: Endpoint,
  model: string,
  prompt: SamplePrompt,
  n: number,
  p: SamplingParams,
  extra: Record<string, unknown>,
  mode: RequestMode = DEFAULT_MODE,
): Record<string, unknown> {
  const body: Record<string, unknown> = { model, n, max_tokens: p.maxNewTokens, temperature: p.temperature, top_p: p.topP, seed: p.seed };
  if (p.topK > 0) body.top_k = p.topK; // vLLM / SGLang extension; left out when off
  if (p.stop.length > 0) body.stop = [...p.stop];
  const tokens = mode.returns === 'tokens';
  if (tokens) body.return_tokens_as_token_ids = true;
  if (endpoint === 'completions') {
    if (prompt.tokens !== undefined) body.prompt = [...prompt.tokens];
    else if (prompt.text !== undefined) body.prompt = prompt.text;
    else throw new RolloutError('invalid_row', 'a /v1/completions prompt needs tokens or text', { field: 'prompt' });
    if (tokens) body.logprobs = 0; // the sampled token's log-prob only
    if (echoes(endpoint, prompt, mode)) body.echo = true; // the prompt's ids come back before the completion's
  } else {
    if (prompt.messages === undefined)
      throw new RolloutError('invalid_row', 'a /v1/chat/completions prompt needs messages', { field: 'prompt' });
    body.messages = prompt.messages.map((m) => ({ role: m.role, content: m.content }));
    if (tokens) Object.assign(body, { logprobs: true, top_logprobs: 0 });
  }
  if (mode.stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return { ...extra, ...body }; // extra fields add to the body, never replace what the contract needs
}

/**
 * Validate a response body and turn it into `n` completions in choice-index order. With `echo`,
 * each completion choice starts with the prompt (text and tokens, `usage.prompt_tokens` of them),
 * which becomes the prompt tokens. With `returns: 'text'` the completions carry their text and
 * finish reason and no tokens, and `completionTokens` is the response's `usage.completion_tokens`.
 * Throws `RolloutError('invalid_response')` naming what is wrong.
 */
export function parseResponse(
  endpoint: Endpoint,
  json: unknown,
  prompt: SamplePrompt,
  n: number,
  how: { echo?: boolean; returns?: Returns } = {},
): PromptSamples {
  const echo = how.echo === true;
  const schema = endpoint === 'completions' ? CompletionResponseSchema : ChatResponseSchema;
  const r = schema.safeParse(json);
  if (!r.success)
    throw new RolloutError(
      'invalid_response',
      `response does not match the ${endpoint} protocol: ${formatZodIssues(r.error.issues)}`,
      {},
      { cause: r.error },
    );
  const choices = r.data.choices;
  if (choices.length !== n)
    throw new RolloutError('invalid_response', `asked for n=${n} completions, got ${choices.length} choices`, { field: 'choices' });
  if (how.returns === 'text') return textSamples(endpoint, r.data, prompt, n);
  const byIndex: (SampledCompletion | undefined)[] = new Array(n);
  let echoed: number[] | undefined;
  for (const c of choices) {
    const at = { field: `choices.${c.index}` };
    if (c.index >= n || byIndex[c.index] !== undefined)
      throw new RolloutError('invalid_response', `choice index ${c.index} is out of range or repeated`, at);
    if (endpoint === 'completions' && echo) {
      const split = splitEcho(
        c as CompletionChoice,
        prompt.text ?? '',
        (r.data as { usage?: { prompt_tokens: number } | null }).usage?.prompt_tokens,
      );
      if (echoed !== undefined && (split.prompt.length !== echoed.length || split.prompt.some((id, i) => id !== echoed![i]))) {
        throw new RolloutError('invalid_response', 'the choices echo different prompt tokens', at);
      }
      echoed = split.prompt;
      byIndex[c.index] = fromCompletionChoice(split.choice);
    } else byIndex[c.index] = endpoint === 'completions' ? fromCompletionChoice(c as CompletionChoice) : fromChatChoice(c as ChatChoice);
  }
  const first = choices[0] as { prompt_token_ids?: number[] | null } | undefined;
  const promptTokens = prompt.tokens ?? echoed ?? r.data.prompt_token_ids ?? first?.prompt_token_ids ?? [];
  return { promptTokens, completions: byIndex as SampledCompletion[] };
}

/** Text-only completions (no token ids asked): text and finish per choice, the token count from `usage`. */
function textSamples(
  endpoint: Endpoint,
  data: {
    choices: unknown[];
    usage?: { completion_tokens?: number | undefined } | null | undefined;
    prompt_token_ids?: number[] | null | undefined;
  },
  prompt: SamplePrompt,
  n: number,
): PromptSamples {
  const count = data.usage?.completion_tokens;
  if (count === undefined)
    throw new RolloutError(
      'invalid_response',
      'no usage.completion_tokens in the response: ask for token ids (returns: "tokens") from this server',
      { field: 'usage' },
    );
  const byIndex: (SampledCompletion | undefined)[] = new Array(n);
  for (const choice of data.choices) {
    const c = choice as CompletionChoice | ChatChoice;
    if (c.index >= n || byIndex[c.index] !== undefined)
      throw new RolloutError('invalid_response', `choice index ${c.index} is out of range or repeated`, { field: `choices.${c.index}` });
    const finish = FINISH.get(c.finish_reason ?? '');
    const text = endpoint === 'completions' ? (c as CompletionChoice).text : ((c as ChatChoice).message.content ?? '');
    byIndex[c.index] =
      finish === undefined
        ? { tokens: [], finish: 'error', error: `server ended the completion with finish_reason ${JSON.stringify(c.finish_reason)}` }
        : { tokens: [], finish, text };
  }
  return {
    promptTokens: prompt.tokens ?? data.prompt_token_ids ?? [],
    completions: byIndex as SampledCompletion[],
    completionTokens: count,
  };
}

/** An echoed choice: the prompt's `promptTokens` ids and text first, then the completion. */
function splitEcho(
  c: CompletionChoice,
  promptText: string,
  promptTokens: number | undefined,
): { prompt: number[]; choice: CompletionChoice } {
  const field = `choices.${c.index}`;
  if (promptTokens === undefined)
    throw new RolloutError('invalid_response', 'an echoed response needs usage.prompt_tokens to tell the prompt from the completion', {
      field: 'usage',
    });
  if (!c.text.startsWith(promptText))
    throw new RolloutError('invalid_response', 'the echoed text does not start with the prompt (was echo ignored by the server?)', {
      field: `${field}.text`,
    });
  const lp = c.logprobs;
  if (lp == null)
    throw new RolloutError('invalid_response', 'no log-probs in the choice (was logprobs ignored by the server?)', {
      field: `${field}.logprobs`,
    });
  const ids = tokenIdsFromStrings(lp.tokens, `${field}.logprobs.tokens`);
  if (ids.length < promptTokens)
    throw new RolloutError('invalid_response', `${ids.length} echoed tokens, fewer than the ${promptTokens} prompt tokens`, {
      field: `${field}.logprobs.tokens`,
    });
  const rest = { ...lp, tokens: lp.tokens.slice(promptTokens), token_logprobs: lp.token_logprobs.slice(promptTokens) };
  const tokenIds = c.token_ids == null ? c.token_ids : c.token_ids.slice(c.token_ids.length - rest.tokens.length);
  return {
    prompt: ids.slice(0, promptTokens),
    choice: { ...c, text: c.text.slice(promptText.length), logprobs: rest, token_ids: tokenIds },
  };
}

type CompletionChoice = z.infer<typeof CompletionChoiceSchema>;
type ChatChoice = z.infer<typeof ChatChoiceSchema>;

function fromCompletionChoice(c: CompletionChoice): SampledCompletion {
  const lp = c.logprobs ?? null;
  const logprobs = lp?.token_logprobs;
  if (logprobs === undefined)
    throw new RolloutError('invalid_response', 'no log-probs in the choice (was logprobs ignored by the server?)', {
      field: `choices.${c.index}.logprobs`,
    });
  const ids = c.token_ids ?? tokenIdsFromStrings(lp!.tokens, `choices.${c.index}.logprobs.tokens`);
  return completion(c.index, ids, logprobs, c.finish_reason, c.text);
}

function fromChatChoice(c: ChatChoice): SampledCompletion {
  const content = c.logprobs?.content ?? null;
  if (content === null)
    throw new RolloutError('invalid_response', 'no log-probs in the choice (was logprobs ignored by the server?)', {
      field: `choices.${c.index}.logprobs`,
    });
  const ids =
    c.token_ids ??
    tokenIdsFromStrings(
      content.map((x) => x.token),
      `choices.${c.index}.logprobs.content`,
    );
  return completion(
    c.index,
    ids,
    content.map((x) => x.logprob),
    c.finish_reason,
    c.message.content ?? '',
  );
}

function completion(
  index: number,
  ids: readonly number[],
  logprobs: readonly (number | null)[],
  finishReason: string | null,
  text: string,
): SampledCompletion {
  const field = `choices.${index}`;
  if (ids.length !== logprobs.length)
    throw new RolloutError('invalid_response', `${ids.length} token ids but ${logprobs.length} log-probs`, { field });
  const lps = logprobs.map((x, t) => {
    if (x === null) throw new RolloutError('invalid_response', `log-prob of token ${t} is null`, { field });
    return x;
  });
  // an own-property lookup: "constructor" or "__proto__" are not finish reasons
  const finish = FINISH.get(finishReason ?? '');
  if (finish === undefined)
    return { tokens: [], finish: 'error', error: `server ended the completion with finish_reason ${JSON.stringify(finishReason)}` };
  return { tokens: ids, logprobs: lps, finish, text };
}

const FINISH = new Map<string, FinishReason>([
  ['stop', 'stop'],
  ['length', 'length'],
]);

function tokenIdsFromStrings(tokens: readonly string[], field: string): number[] {
  return tokens.map((s, t) => {
    const m = /^token_id:(\d{1,10})$/.exec(s);
    if (m === null) {
      throw new RolloutError(
        'invalid_response',
        `token ${t} is ${JSON.stringify(s.length > 40 ? s.slice(0, 37) + '...' : s)}, not "token_id:N": the server must support return_tokens_as_token_ids`,
        { field },
      );
    }
    const id = Number(m[1]);
    if (id > MAX_TOKEN_ID)
      throw new RolloutError('invalid_response', `token ${t} has id ${m[1]}, over the largest token id ${MAX_TOKEN_ID}`, { field });
    return id;
  });
}
