import { z } from 'zod';
import { formatZodIssues, type FinishReason } from '@rlvr/core';
import { RolloutError } from '../errors.js';
import type { PromptSamples, SampledCompletion, SamplePrompt, SamplingParams } from './sampler.js';

/**
 * The OpenAI-compatible wire format as vLLM speaks it (SGLang follows it): request
 * bodies for `/v1/completions` and `/v1/chat/completions`, and zod schemas that every
 * response passes through. Token ids come back as `"token_id:123"` strings in the
 * log-probs when `return_tokens_as_token_ids` is set, or as `token_ids` lists from
 * servers that support vLLM's `return_token_ids`; a response without either is
 * rejected, since a rollout batch needs the sampled ids.
 */

const Ids = z.array(z.number().int().nonnegative());

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

export const CompletionResponseSchema = z.looseObject({
  choices: z.array(CompletionChoiceSchema),
  prompt_token_ids: Ids.nullable().optional(),
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
});

export type Endpoint = 'completions' | 'chat';

/** The JSON body of one request for `n` completions of a prompt; `extra` adds fields (it cannot replace the ones set here). */
export function requestBody(endpoint: Endpoint, model: string, prompt: SamplePrompt, n: number, p: SamplingParams, extra: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = { model, n, max_tokens: p.maxNewTokens, temperature: p.temperature, top_p: p.topP, seed: p.seed };
  if (p.topK > 0) body.top_k = p.topK; // vLLM / SGLang extension; left out when off
  if (p.stop.length > 0) body.stop = [...p.stop];
  body.return_tokens_as_token_ids = true;
  if (endpoint === 'completions') {
    if (prompt.tokens !== undefined) body.prompt = [...prompt.tokens];
    else if (prompt.text !== undefined) body.prompt = prompt.text;
    else throw new RolloutError('invalid_row', 'a /v1/completions prompt needs tokens or text', { field: 'prompt' });
    body.logprobs = 0; // the sampled token's log-prob only
  } else {
    if (prompt.messages === undefined) throw new RolloutError('invalid_row', 'a /v1/chat/completions prompt needs messages', { field: 'prompt' });
    body.messages = prompt.messages.map((m) => ({ role: m.role, content: m.content }));
    body.logprobs = true;
    body.top_logprobs = 0;
  }
  return { ...extra, ...body }; // extra fields add to the body, never replace what the contract needs
}

/**
 * Validate a response body and turn it into `n` completions in choice-index order.
 * Throws `RolloutError('invalid_response')` naming what is wrong.
 */
export function parseResponse(endpoint: Endpoint, json: unknown, prompt: SamplePrompt, n: number): PromptSamples {
  const schema = endpoint === 'completions' ? CompletionResponseSchema : ChatResponseSchema;
  const r = schema.safeParse(json);
  if (!r.success) throw new RolloutError('invalid_response', `response does not match the ${endpoint} protocol: ${formatZodIssues(r.error.issues)}`, {}, { cause: r.error });
  const choices = r.data.choices;
  if (choices.length !== n) throw new RolloutError('invalid_response', `asked for n=${n} completions, got ${choices.length} choices`, { field: 'choices' });
  const byIndex: (SampledCompletion | undefined)[] = new Array(n);
  for (const c of choices) {
    const at = { field: `choices.${c.index}` };
    if (c.index >= n || byIndex[c.index] !== undefined) throw new RolloutError('invalid_response', `choice index ${c.index} is out of range or repeated`, at);
    byIndex[c.index] = endpoint === 'completions' ? fromCompletionChoice(c as CompletionChoice) : fromChatChoice(c as ChatChoice);
  }
  const first = choices[0] as { prompt_token_ids?: number[] | null } | undefined;
  const promptTokens = prompt.tokens ?? r.data.prompt_token_ids ?? first?.prompt_token_ids ?? [];
  return { promptTokens, completions: byIndex as SampledCompletion[] };
}

type CompletionChoice = z.infer<typeof CompletionChoiceSchema>;
type ChatChoice = z.infer<typeof ChatChoiceSchema>;

function fromCompletionChoice(c: CompletionChoice): SampledCompletion {
  const lp = c.logprobs ?? null;
  const logprobs = lp?.token_logprobs;
  if (logprobs === undefined) throw new RolloutError('invalid_response', 'no log-probs in the choice (was logprobs ignored by the server?)', { field: `choices.${c.index}.logprobs` });
  const ids = c.token_ids ?? tokenIdsFromStrings(lp!.tokens, `choices.${c.index}.logprobs.tokens`);
  return completion(c.index, ids, logprobs, c.finish_reason, c.text);
}

function fromChatChoice(c: ChatChoice): SampledCompletion {
  const content = c.logprobs?.content ?? null;
  if (content === null) throw new RolloutError('invalid_response', 'no log-probs in the choice (was logprobs ignored by the server?)', { field: `choices.${c.index}.logprobs` });
  const ids = c.token_ids ?? tokenIdsFromStrings(content.map((x) => x.token), `choices.${c.index}.logprobs.content`);
  return completion(c.index, ids, content.map((x) => x.logprob), c.finish_reason, c.message.content ?? '');
}

function completion(index: number, ids: readonly number[], logprobs: readonly (number | null)[], finishReason: string | null, text: string): SampledCompletion {
  const field = `choices.${index}`;
  if (ids.length !== logprobs.length) throw new RolloutError('invalid_response', `${ids.length} token ids but ${logprobs.length} log-probs`, { field });
  const lps = logprobs.map((x, t) => {
    if (x === null) throw new RolloutError('invalid_response', `log-prob of token ${t} is null`, { field });
    return x;
  });
  const finish = FINISH[finishReason ?? ''];
  if (finish === undefined) return { tokens: [], finish: 'error', error: `server ended the completion with finish_reason ${JSON.stringify(finishReason)}` };
  return { tokens: ids, logprobs: lps, finish, text };
}

const FINISH: Record<string, FinishReason> = { stop: 'stop', length: 'length' };

function tokenIdsFromStrings(tokens: readonly string[], field: string): number[] {
  return tokens.map((s, t) => {
    const m = /^token_id:(\d+)$/.exec(s);
    if (m === null) {
      throw new RolloutError('invalid_response', `token ${t} is ${JSON.stringify(s)}, not "token_id:N": the server must support return_tokens_as_token_ids`, { field });
    }
    return Number(m[1]);
  });
}
