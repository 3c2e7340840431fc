/**
 * `/v1/completions` and `/v1/chat/completions`: a parsed request becomes decode rows on the
 * policy sampler's queue (sharing the running batch with every other request), and the rows
 * become vLLM's response, whole or as a server-sent event stream.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { DecodeRow, type DecodeParams } from '../samplers/decode-row.js';
import type { PolicySampler } from '../samplers/policy-sampler.js';
import { promptLogprobs, type PromptLogprobs } from '../samplers/prompt-logprobs.js';
import { tokensBytes, type TokenBytes } from '@rlvr/core';
import type { ServeChatRequest, ServeCompletionRequest } from './protocol.js';
import type { PreparedChat, PreparedCompletion } from './requests.js';
import { chatLogprobs, codePoints, completionLogprobs, promptLogprobsField, textOffsets, usage, type TokenName } from './responses.js';
import { SseStream } from './sse.js';

/** What the handlers generate with. */
export interface Engine {
  model: Qwen3Model;
  tokenizer: Tokenizer;
  /** the policy sampler's token bytes and EOS ids, and the decode queue (in process, or on policy workers) */
  sampler: Pick<PolicySampler, 'tokenBytes' | 'eosTokenIds' | 'decode'>;
  servedModelName: string;
  /** counts tokens and finished requests for /metrics */
  onFinished(promptTokens: number, completionTokens: number, reasons: readonly string[]): void;
}

/** Bytes of a token in completion text: special tokens are empty unless the request keeps them. */
function textBytes(e: Engine, keepSpecial: boolean): TokenBytes {
  return keepSpecial ? { tokenBytes: (id) => safeBytes(e.tokenizer, id) } : e.sampler.tokenBytes;
}

function safeBytes(t: Tokenizer, id: number): Uint8Array {
  try {
    return t.tokenBytes(id);
  } catch {
    return new Uint8Array(0); // an id of the embedding table beyond the tokenizer (padding rows)
  }
}

/** Token strings of the log-probs: special tokens by their text (`<|im_end|>`), others decoded. */
function tokenNamer(e: Engine, asIds: boolean): TokenName {
  if (asIds) return (id) => `token_id:${id}`;
  const special = new Map([...e.tokenizer.specialTokens].map(([text, id]) => [id, text]));
  const decoder = new TextDecoder();
  return (id) => special.get(id) ?? decoder.decode(e.sampler.tokenBytes.tokenBytes(id));
}

/** The decode parameters of a request (both endpoints; its ids were checked against the vocabulary in `requests.ts`). */
function decodeParams(
  r: Omit<ServeCompletionRequest, 'prompt'> | Omit<ServeChatRequest, 'messages'>,
  maxTokens: number,
  topLogprobs: number,
): DecodeParams {
  const bias = new Map(Object.entries(r.logit_bias ?? {}).map(([k, v]) => [Number(k), v]));
  return {
    temperature: r.temperature ?? 1,
    topP: r.top_p ?? 1,
    topK: r.top_k == null || r.top_k <= 0 ? 0 : r.top_k,
    minP: r.min_p ?? 0,
    maxNewTokens: maxTokens,
    stop: r.stop == null ? [] : typeof r.stop === 'string' ? [r.stop] : r.stop.filter((s) => s.length > 0),
    seed: r.seed ?? randomInt(2 ** 31), // no seed: a fresh one, as vLLM does
    minTokens: r.min_tokens ?? 0,
    ignoreEos: r.ignore_eos ?? false,
    stopTokenIds: r.stop_token_ids ?? [],
    includeStopStrInOutput: r.include_stop_str_in_output ?? false,
    presencePenalty: r.presence_penalty ?? 0,
    frequencyPenalty: r.frequency_penalty ?? 0,
    repetitionPenalty: r.repetition_penalty ?? 1,
    logitBias: bias,
    ...(r.allowed_token_ids != null ? { allowedTokenIds: r.allowed_token_ids } : {}),
    topLogprobs,
  };
}

const finishReasons = (rows: readonly DecodeRow[]): string[] => rows.map((r) => r.end?.finish ?? 'abort');

/** A prepared `/v1/completions` request (`requests.ts`: checked, its prompts tokenized) decoded into vLLM's response, whole or streamed. */
export async function completions(e: Engine, p: PreparedCompletion, res: ServerResponse, signal: AbortSignal): Promise<unknown> {
  const { request: r, prompts, maxTokens } = p;
  const k = r.logprobs ?? 0;
  const params = decodeParams(r, Math.max(maxTokens, 1), k);
  const name = tokenNamer(e, r.return_tokens_as_token_ids === true);
  const bytes = textBytes(e, r.skip_special_tokens === false);
  const bytesOf = (id: number) => bytes.tokenBytes(id);
  const eos = new Set(e.sampler.eosTokenIds);
  const wantPrompt = r.echo === true || r.prompt_logprobs != null;
  const promptScores: (PromptLogprobs | null)[] = [];
  for (const ids of prompts) {
    promptScores.push(wantPrompt ? await promptLogprobs(e.model, ids, Math.max(k, r.prompt_logprobs ?? 0), params.temperature) : null);
    signal.throwIfAborted();
  }
  const promptTexts = prompts.map((ids) => new TextDecoder().decode(tokensBytes(ids, bytes)));
  const id = `cmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const head = { id, object: 'text_completion', created, model: e.servedModelName };
  const promptTokens = prompts.reduce((n, p) => n + p.length, 0);

  /** The echoed prompt in front of choice i's tokens: its text, tokens and their log-probs. */
  const echoOf = (i: number) => {
    const ids = prompts[i]!;
    const scores = promptScores[i]!;
    return {
      text: promptTexts[i]!,
      tokens: ids,
      logprobs: scores.logprobs,
      top: scores.top.map((t) => (t === null ? null : k > 0 ? t : [])),
    };
  };
  const extraFields = (i: number, row: DecodeRow | null): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (r.prompt_logprobs != null)
      out.prompt_logprobs = promptLogprobsField(
        prompts[i]!,
        { logprobs: promptScores[i]!.logprobs, top: promptScores[i]!.top.map((t) => t?.slice(0, r.prompt_logprobs!) ?? null) },
        name,
      );
    if (r.return_token_ids === true) Object.assign(out, { prompt_token_ids: prompts[i], token_ids: row?.tokens ?? [] });
    return out;
  };

  if (maxTokens === 0) {
    // scoring only: the echoed prompt, no generation
    const choices = prompts.flatMap((_, i) =>
      Array.from({ length: r.n }, (_, j) => {
        const echo = echoOf(i);
        const logprobs = k > 0 || r.logprobs === 0 ? completionLogprobs(echo, name, textOffsets(echo.tokens, bytesOf)) : null;
        return { index: i * r.n + j, text: echo.text, logprobs, finish_reason: 'length', stop_reason: null, ...extraFields(i, null) };
      }),
    );
    e.onFinished(
      promptTokens,
      0,
      choices.map(() => 'length'),
    );
    return { ...head, choices, usage: usage(promptTokens, 0) };
  }

  const withLogprobs = r.logprobs != null;
  if (r.stream === true) {
    const sse = new SseStream(res);
    const includeUsage = r.stream_options?.include_usage === true;
    const continuous = r.stream_options?.continuous_usage_stats === true;
    let completionTokens = 0;
    const states: ChoiceStream[] = [];
    const rows = prompts.flatMap((ids, i) =>
      Array.from({ length: r.n }, (_, j) => {
        const index = i * r.n + j;
        const state = new ChoiceStream(bytesOf);
        states[index] = state;
        return new DecodeRow(ids, params, j, eos, bytes, (row) => {
          completionTokens++;
          const t = row.tokens.length - 1;
          const step = { tokens: [row.tokens[t]!], logprobs: [row.logprobs[t]!], top: [row.top[t] ?? []] };
          const text = state.advance(row);
          const choice: Record<string, unknown> = {
            index,
            text,
            logprobs: withLogprobs ? completionLogprobs(step, name, state.offsets(step.tokens)) : null,
            finish_reason: row.end?.finish ?? null,
            stop_reason: row.end?.stopReason ?? null,
          };
          if (row.done && r.return_token_ids === true) Object.assign(choice, { token_ids: row.tokens });
          // vLLM's continuous usage: this choice's prompt and its tokens so far
          sse.send({ ...head, choices: [choice], ...(continuous ? { usage: usage(ids.length, row.tokens.length) } : {}) });
        });
      }),
    );
    if (r.echo === true) {
      prompts.forEach((_, i) => {
        for (let j = 0; j < r.n; j++) {
          const echo = echoOf(i);
          const index = i * r.n + j;
          states[index]!.startAt(codePoints(echo.text));
          sse.send({
            ...head,
            choices: [
              {
                index,
                text: echo.text,
                logprobs: withLogprobs ? completionLogprobs(echo, name, textOffsets(echo.tokens, bytesOf)) : null,
                finish_reason: null,
                stop_reason: null,
                ...extraFields(i, null),
              },
            ],
          });
        }
      });
    }
    return finishStream(e, rows, sse, signal, () => usage(promptTokens, completionTokens), includeUsage ? head : null);
  }

  const rows = prompts.flatMap((ids) => Array.from({ length: r.n }, (_, j) => new DecodeRow(ids, params, j, eos, bytes)));
  await e.sampler.decode(rows, signal);
  const decoder = new TextDecoder();
  const choices = rows.map((row, index) => {
    const i = Math.floor(index / r.n);
    const text = decoder.decode(row.text());
    const gen = { tokens: row.tokens, logprobs: row.logprobs, top: row.tokens.map((_, t) => row.top[t] ?? []) };
    let logprobs: Record<string, unknown> | null = null;
    let full = text;
    if (r.echo === true) {
      const echo = echoOf(i);
      full = echo.text + text;
      if (withLogprobs)
        logprobs = completionLogprobs(
          { tokens: [...echo.tokens, ...gen.tokens], logprobs: [...echo.logprobs, ...gen.logprobs], top: [...echo.top, ...gen.top] },
          name,
          textOffsets([...echo.tokens, ...gen.tokens], bytesOf),
        );
    } else if (withLogprobs) logprobs = completionLogprobs(gen, name, textOffsets(gen.tokens, bytesOf));
    return { index, text: full, logprobs, finish_reason: row.end!.finish, stop_reason: row.end!.stopReason, ...extraFields(i, row) };
  });
  const completionTokens = rows.reduce((n, row) => n + row.tokens.length, 0);
  e.onFinished(promptTokens, completionTokens, finishReasons(rows));
  return { ...head, choices, usage: usage(promptTokens, completionTokens) };
}

/** A prepared `/v1/chat/completions` request (`requests.ts`: checked, rendered, tokenized) decoded into vLLM's response. */
export async function chat(e: Engine, p: PreparedChat, res: ServerResponse, signal: AbortSignal): Promise<unknown> {
  const { request: r, ids, maxTokens } = p;
  const withLogprobs = r.logprobs === true;
  const params = decodeParams(r, maxTokens, withLogprobs ? (r.top_logprobs ?? 0) : 0);
  const name = tokenNamer(e, r.return_tokens_as_token_ids === true);
  const bytes = textBytes(e, r.skip_special_tokens === false);
  const bytesOf = (id: number) => bytes.tokenBytes(id);
  const eos = new Set(e.sampler.eosTokenIds);
  const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const promptTokens = ids.length;
  const promptScores = r.prompt_logprobs != null ? await promptLogprobs(e.model, ids, r.prompt_logprobs, params.temperature) : null;
  const promptField = promptScores === null ? {} : { prompt_logprobs: promptLogprobsField(ids, promptScores, name) };

  if (r.stream === true) {
    const head = { id, object: 'chat.completion.chunk', created, model: e.servedModelName };
    const sse = new SseStream(res);
    const includeUsage = r.stream_options?.include_usage === true;
    const continuous = r.stream_options?.continuous_usage_stats === true;
    let completionTokens = 0;
    // every choice opens with the assistant role, as vLLM and OpenAI stream it
    for (let j = 0; j < r.n; j++)
      sse.send({
        ...head,
        choices: [{ index: j, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
        ...(continuous ? { usage: usage(promptTokens, 0) } : {}),
      });
    const rows = Array.from({ length: r.n }, (_, j) => {
      const state = new ChoiceStream(bytesOf);
      return new DecodeRow(ids, params, j, eos, bytes, (row) => {
        completionTokens++;
        const t = row.tokens.length - 1;
        const step = { tokens: [row.tokens[t]!], logprobs: [row.logprobs[t]!], top: [row.top[t] ?? []] };
        const content = state.advance(row);
        const choice: Record<string, unknown> = {
          index: j,
          delta: { content },
          logprobs: withLogprobs ? { content: chatLogprobs(step, name, bytesOf) } : null,
          finish_reason: row.end?.finish ?? null,
        };
        if (row.done) choice.stop_reason = row.end?.stopReason ?? null;
        if (row.done && r.return_token_ids === true) choice.token_ids = row.tokens;
        // vLLM's continuous usage: this choice's tokens so far
        sse.send({ ...head, choices: [choice], ...(continuous ? { usage: usage(promptTokens, row.tokens.length) } : {}) });
      });
    });
    return finishStream(e, rows, sse, signal, () => usage(promptTokens, completionTokens), includeUsage ? head : null);
  }

  const rows = Array.from({ length: r.n }, (_, j) => new DecodeRow(ids, params, j, eos, bytes));
  await e.sampler.decode(rows, signal);
  const decoder = new TextDecoder();
  const choices = rows.map((row, index) => ({
    index,
    message: { role: 'assistant', content: decoder.decode(row.text()), tool_calls: [] },
    logprobs: withLogprobs
      ? {
          content: chatLogprobs(
            { tokens: row.tokens, logprobs: row.logprobs, top: row.tokens.map((_, t) => row.top[t] ?? []) },
            name,
            bytesOf,
          ),
        }
      : null,
    finish_reason: row.end!.finish,
    stop_reason: row.end!.stopReason,
    ...(r.return_token_ids === true ? { token_ids: row.tokens } : {}),
  }));
  const completionTokens = rows.reduce((n, row) => n + row.tokens.length, 0);
  e.onFinished(promptTokens, completionTokens, finishReasons(rows));
  return {
    id,
    object: 'chat.completion',
    created,
    model: e.servedModelName,
    choices,
    usage: usage(promptTokens, completionTokens),
    ...promptField,
    ...(r.return_token_ids === true ? { prompt_token_ids: ids } : {}),
  };
}

/** A handler's answer when it already streamed its response. */
export const STREAMED = Symbol('streamed');

/**
 * Decode the rows of a stream (their listeners send the chunks), then the usage chunk (`usageHead`:
 * the chunk's id fields, when `include_usage` asked for it) and `[DONE]`; a failure after the
 * stream began is one error event. A client that went away rejects as before.
 */
async function finishStream(
  e: Engine,
  rows: readonly DecodeRow[],
  sse: SseStream,
  signal: AbortSignal,
  total: () => ReturnType<typeof usage>,
  usageHead: Record<string, unknown> | null,
): Promise<typeof STREAMED> {
  try {
    await e.sampler.decode(rows, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    sse.error(err);
    return STREAMED;
  }
  const u = total();
  e.onFinished(u.prompt_tokens, u.completion_tokens, finishReasons(rows));
  if (usageHead !== null) sse.send({ ...usageHead, choices: [], usage: u });
  sse.end();
  return STREAMED;
}

/** What one streamed choice has shown: the text delta of each new token, held back where a stop string could still begin. */
class ChoiceStream {
  private readonly decoder = new TextDecoder();
  private shown = 0;
  private readonly offsetDecoder = new TextDecoder();
  private chars = 0;
  constructor(private readonly bytesOf: (id: number) => Uint8Array) {}

  /** Continue the text offsets after an echoed prompt of `chars` characters. */
  startAt(chars: number): void {
    this.chars = chars;
  }

  /** The new text of a row after its last token (everything left once it ended). */
  advance(row: DecodeRow): string {
    const text = row.text();
    const upTo = row.done ? text.length : Math.min(text.length, row.matcher.settled());
    if (upTo <= this.shown) return '';
    const delta = this.decoder.decode(text.subarray(this.shown, upTo), { stream: !row.done });
    this.shown = upTo;
    return delta;
  }

  /** Text offsets of `tokens`, continuing from the tokens before them. */
  offsets(tokens: readonly number[]): number[] {
    return tokens.map((id) => {
      const at = this.chars;
      this.chars += codePoints(this.offsetDecoder.decode(this.bytesOf(id), { stream: true }));
      return at;
    });
  }
}
